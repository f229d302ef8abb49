import { describe, expect, it } from 'vitest';
import { startReceiver, type Answer, type ReceivedRequest, type Receiver } from '@agent-platform/kit/testing';
import { IntegrationError } from '../../src/integrations/integration.js';
import { runSlack } from '../../src/integrations/slack-integration.js';
import { context, outboundHttp, rejectionOf } from './outbound.js';

const HOOK = '/services/T0001/B0001/SecretHookToken';
const ARCHIVED = '/services/T0001/B0002/ArchivedToken';
const BROKEN = '/services/T0001/B0003/BrokenToken';

function answer(status: number, text: string): Answer {
  // Slack answers in text/html whatever the outcome.
  return { status, headers: { 'content-type': 'text/html' }, body: text };
}

/**
 * Slack's incoming-webhook protocol: POST a JSON object with `text` to the hook's URL; 200 `ok`,
 * or an error status with the error's name as the body.
 */
function slack(request: ReceivedRequest): Answer {
  if (request.path === '/not-slack') return answer(200, '<html><body>Welcome</body></html>');
  if (request.path === BROKEN) return answer(400, 'invalid_payload'); // a hook that cannot read what it got
  if (request.path === ARCHIVED) return answer(410, 'channel_is_archived');
  if (request.path !== HOOK) return answer(404, 'no_service');
  if (request.method !== 'POST') return answer(405, 'invalid_method');
  let payload: unknown;
  try {
    payload = request.headers['content-type']?.startsWith('application/json') ? JSON.parse(request.body) : undefined;
  } catch {
    payload = undefined;
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return answer(400, 'invalid_payload');
  const { text } = payload as { text?: unknown };
  if (typeof text !== 'string' || text.trim() === '') return answer(400, 'no_text');
  return answer(200, 'ok');
}

async function slackPeer(): Promise<Receiver> {
  return startReceiver(slack);
}

describe('slack integration', () => {
  it('posts {"text": …} as JSON and reports ok', async () => {
    const peer = await slackPeer();
    const output = await runSlack(outboundHttp(), { webhook_url: peer.url(HOOK), text: 'Deploy *finished* — 3 services' }, context());
    expect(output).toEqual({ status: 200, ok: true });
    expect(peer.requests).toHaveLength(1);
    expect(peer.requests[0]).toMatchObject({ method: 'POST', path: HOOK, headers: expect.objectContaining({ 'content-type': 'application/json' }) });
    expect(JSON.parse(peer.requests[0]!.body)).toEqual({ text: 'Deploy *finished* — 3 services' });
  });

  it("fails with Slack's error text, never with the hook's URL", async () => {
    const peer = await slackPeer();
    const http = outboundHttp();
    const cases = [
      [HOOK, '   ', 'Slack rejected the message: no_text (HTTP 400)'],
      [BROKEN, 'hello', 'Slack rejected the message: invalid_payload (HTTP 400)'],
      [ARCHIVED, 'hello', 'Slack rejected the message: channel_is_archived (HTTP 410)'],
      ['/services/T0001/B0001/WrongToken', 'hello', 'Slack rejected the message: no_service (HTTP 404)'],
    ] as const;
    for (const [path, text, message] of cases) {
      const error = await rejectionOf(runSlack(http, { webhook_url: peer.url(path), text }, context()));
      expect(error).toBeInstanceOf(IntegrationError);
      expect(error.message).toBe(message);
      expect(error.message).not.toMatch(/Token/);
    }
  });

  it('fails when a 200 says something other than ok: the URL is not a Slack hook', async () => {
    const peer = await slackPeer();
    const error = await rejectionOf(runSlack(outboundHttp(), { webhook_url: peer.url('/not-slack'), text: 'hi' }, context()));
    expect(error.message).toBe('Slack answered HTTP 200 with "<html><body>Welcome</body></html>" instead of "ok"');
  });

  it('goes through the SSRF guard like any outbound request', async () => {
    const peer = await slackPeer();
    const error = await rejectionOf(runSlack(outboundHttp(false), { webhook_url: peer.url(HOOK), text: 'hi' }, context()));
    expect(error.message).toMatch(/^refused to connect: .*loopback address/);
    await runSlack(outboundHttp(true), { webhook_url: peer.url(HOOK), text: 'sentinel' }, context());
    expect(peer.requests.map((request) => JSON.parse(request.body) as unknown)).toEqual([{ text: 'sentinel' }]);
  });
});
