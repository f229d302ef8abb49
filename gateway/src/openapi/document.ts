import { createLogger } from '@agent-platform/kit';
import { buildGateway, loadGatewayConfig } from '../gateway.js';
import { InertTransport } from './inert-transport.js';

/**
 * The OpenAPI document the gateway's routes make, under the default configuration: the app is
 * built over inert backends and made ready, never started (no port, no database, no Redis).
 */
export async function buildOpenApiDocument(): Promise<unknown> {
  const config = loadGatewayConfig({ LOG_LEVEL: 'silent' });
  const inert = new InertTransport();
  const gateway = await buildGateway(config, {
    logger: createLogger({ service: 'gateway-openapi', level: 'silent' }),
    backends: { identity: inert, agentMemory: inert, webhookDispatcher: inert, workflowRunner: inert },
  });
  try {
    return gateway.app.swagger();
  } finally {
    await gateway.app.close();
  }
}

/** The committed file's exact text: two-space JSON and a final newline. */
export function formatOpenApiDocument(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
