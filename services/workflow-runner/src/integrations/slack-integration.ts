import type { OutboundHttp, OutboundResponse } from '@agent-platform/kit/security';
import { hostOf, IntegrationError, outboundFailure, snippet, type IntegrationContext } from './integration.js';

export interface SlackIntegrationConfig {
  /** A Slack incoming-webhook URL; the URL is the credential, so it never appears in a message. */
  webhook_url: string;
  text: string;
}

export interface SlackIntegrationOutput {
  status: number;
  ok: true;
}

// Slack answers `ok` or a short error code (`invalid_payload`, `no_text`, `channel_not_found`…).
const MAX_SLACK_RESPONSE_BYTES = 16 * 1_024;

/**
 * The `slack` integration: a message to an incoming webhook, which answers 200 with the body `ok`
 * and anything else with a 4xx/5xx and the error's name as plain text.
 */
export async function runSlack(http: OutboundHttp, config: SlackIntegrationConfig, ctx: IntegrationContext): Promise<SlackIntegrationOutput> {
  let response: OutboundResponse;
  try {
    response = await http.request({
      url: config.webhook_url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: config.text }),
      timeoutMs: ctx.timeoutMs,
      maxResponseBytes: MAX_SLACK_RESPONSE_BYTES,
      signal: ctx.signal,
    });
  } catch (error) {
    throw outboundFailure(error, hostOf(config.webhook_url));
  }

  const { status } = response;
  const answer = snippet(response.body.toString('utf8'));
  if (status >= 200 && status < 300) {
    if (answer === 'ok') return { status, ok: true };
    throw new IntegrationError(`Slack answered HTTP ${status} with ${answer === '' ? 'an empty body' : `"${answer}"`} instead of "ok"`);
  }
  if (status >= 300 && status < 400) throw new IntegrationError(`Slack answered HTTP ${status}: redirects are not followed`);
  throw new IntegrationError(answer === '' ? `Slack rejected the message (HTTP ${status})` : `Slack rejected the message: ${answer} (HTTP ${status})`);
}
