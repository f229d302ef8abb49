import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentPlatformClient } from '@agent-platform/client';
import type { RouteLoad } from './load.js';
import { dataOf } from './platform.js';

export interface CountingReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Requests answered so far. */
  received(): number;
  close(): void;
}

/** A local peer for integration nodes: answers every request 200 `{"ok":true}` once its body is read, and counts them. */
export async function startCountingReceiver(): Promise<CountingReceiver> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The `p`th percentile (0–100) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * The executions benches' workflow, active: webhook → condition → http integration to
 * `receiverUrl` (`/big` when `input.amount > 100`, else `/small`). Returns the webhook's URL on
 * `baseUrl` and a load that triggers it (one fixed order, the `/big` branch); the platform must
 * allow private network URLs for the receiver on loopback.
 */
export async function createReceiverWorkflow(
  client: AgentPlatformClient,
  baseUrl: string,
  receiverUrl: string,
): Promise<{ workflowId: string; hookUrl: string; hookLoad: RouteLoad }> {
  const created = await client.POST('/api/v1/workflows', {
    body: {
      name: 'bench',
      nodes: [
        { id: 'in', type: 'webhook', config: { path: '/orders' } },
        { id: 'route', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'big' }, { else: 'small' }] } },
        { id: 'big', type: 'integration', config: { service: 'http', url: `${receiverUrl}/big`, body: { id: '{{ input.id }}' } } },
        { id: 'small', type: 'integration', config: { service: 'http', url: `${receiverUrl}/small`, body: { id: '{{ input.id }}' } } },
      ],
      edges: [
        { source: 'in', target: 'route' },
        { source: 'route', target: 'big' },
        { source: 'route', target: 'small' },
      ],
    },
  });
  const workflow = dataOf(created, 'creating the workflow');
  dataOf(await client.POST('/api/v1/workflows/{workflow_id}/resume', { params: { path: { workflow_id: workflow.id } } }), 'activating the workflow');
  const hookUrl = `${baseUrl}${new URL(workflow.webhook_url).pathname}`;
  const hookLoad = { url: hookUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'o-1', amount: 150 }) } as const;
  return { workflowId: workflow.id, hookUrl, hookLoad };
}
