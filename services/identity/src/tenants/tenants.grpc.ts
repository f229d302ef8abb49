import type { Handlers } from '@agent-platform/kit/grpc';
import type { MemberServiceService } from '@agent-platform/proto/identity/v1/users';
import { actorOf } from '@agent-platform/kit/grpc';
import type { TenantsService } from './tenants.service.js';

export const MEMBER_SERVICE_NAME = 'agentplatform.identity.v1.MemberService';

/** MemberService over gRPC: the members of the principal's tenant. */
export function memberHandlers(tenants: TenantsService): Handlers<typeof MemberServiceService> {
  return {
    listMembers: async (_request, ctx) => ({ items: await tenants.listMembers(actorOf(ctx)) }),

    addMember: async (request, ctx) => ({ member: await tenants.addMember(actorOf(ctx), request.email, request.role) }),

    updateMember: async (request, ctx) => ({ member: await tenants.updateMember(actorOf(ctx), request.userId, request.role) }),

    removeMember: async (request, ctx) => {
      await tenants.removeMember(actorOf(ctx), request.userId);
      return {};
    },
  };
}
