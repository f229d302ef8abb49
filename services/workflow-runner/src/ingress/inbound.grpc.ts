import type { Handlers } from '@agent-platform/kit/grpc';
import type { InboundServiceService } from '@agent-platform/proto/workflows/v1';
import type { InboundService } from './inbound.service.js';

export const INBOUND_SERVICE_NAME = 'agentplatform.workflows.v1.InboundService';

/** InboundService: called by the gateway without a principal (the address is public). */
export function inboundHandlers(inbound: InboundService): Handlers<typeof InboundServiceService> {
  return {
    resolveInbound: async (request) => ({ tenantId: await inbound.resolve(request.workflowId) }),
  };
}
