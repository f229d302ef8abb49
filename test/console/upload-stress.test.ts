import { describe, expect, inject, it } from 'vitest';
import { multiPagePdf } from '../../services/agent-memory/test/fixtures/documents.js';
import { clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();
/** Within the free plan's rate limit, with a download of each. */
const UPLOADS = 24;
const AT_ONCE = 6;

/**
 * Once, under the whole suite's load, a PDF uploaded while Chrome's network emulation changed was
 * stored as something else. Uploads at once, each while the network switches between throttled
 * and free every 150 ms, are each stored byte for byte (run 5 times on one machine: 120 uploads).
 */
describe('uploads from a browser whose network changes under them', () => {
  it('stores every file byte for byte', async () => {
    await withConsole(async ({ page, context }) => {
      const account = await registerThroughConsole(page);
      const client = await clientFor(account);
      const { data: tokens } = await client.POST('/api/v1/auth/login', { body: { username: account.email, password: account.password } });
      const { data: agent } = await client.POST('/api/v1/agents', { body: { name: 'Stress', type: 'assistant', config: { memory_extraction: false } } });
      await page.goto('/console/');
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      let throttled = false;
      let changes = 0;
      const toggler = setInterval(() => {
        throttled = !throttled;
        changes += 1;
        void cdp.send('Network.emulateNetworkConditions', { offline: false, latency: throttled ? 20 : 0, downloadThroughput: -1, uploadThroughput: throttled ? 96 * 1024 : -1 }).catch(() => undefined);
      }, 150);
      const files = await Promise.all(Array.from({ length: UPLOADS }, (_, index) => multiPagePdf({ pages: 2 + (index % 3), paddingBytes: 64 * 1024 + index * 997 })));
      const mismatches: string[] = [];
      try {
        for (let next = 0; next < UPLOADS; next += AT_ONCE) {
          // Each batch starts throttled, so the timer's next change comes before it can end.
          await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 96 * 1024 });
          throttled = true;
          const changesBefore = changes;
          const batch = files.slice(next, next + AT_ONCE).map((bytes, offset) => ({ index: next + offset, base64: bytes.toString('base64') }));
          const answers = await page.evaluate(
            async ({ batch, token, agentId }) =>
              Promise.all(
                batch.map(async ({ index, base64 }) => {
                  const form = new FormData();
                  form.append('agent_id', agentId);
                  form.append('file', new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type: 'application/pdf' }), `file-${index}.pdf`);
                  const response = await fetch('/api/v1/memory/documents', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
                  return { index, status: response.status, body: await response.text() };
                }),
              ),
            { batch, token: tokens!.access_token, agentId: agent!.id },
          );
          // The sentinel that the network changed while this batch was on its way.
          expect(changes - changesBefore).toBeGreaterThan(0);
          for (const answer of answers) {
            if (answer.status !== 202) {
              mismatches.push(`upload ${answer.index}: ${answer.status} ${answer.body}`);
              continue;
            }
            const { id } = JSON.parse(answer.body) as { id: string };
            const response = await fetch(new URL(`/api/v1/memory/documents/${id}/file`, inject('baseUrl')), { headers: { authorization: `Bearer ${tokens!.access_token}` } });
            const stored = Buffer.from(await response.arrayBuffer());
            if (response.status !== 200) {
              mismatches.push(`download ${answer.index}: ${response.status} ${stored.toString()}`);
              continue;
            }
            if (!stored.equals(files[answer.index]!)) mismatches.push(`upload ${answer.index}: stored ${stored.length} bytes, sent ${files[answer.index]!.length}, first difference at ${stored.findIndex((byte, at) => byte !== files[answer.index]![at])}`);
          }
        }
      } finally {
        clearInterval(toggler);
      }
      expect(mismatches).toEqual([]);
    });
  }, 600_000);
});
