import { OutboundRequestError } from '@agent-platform/kit/security';

/** What an integration node runs under: the execution's cancellation and the node's time-out. */
export interface IntegrationContext {
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * An integration node failed; `message` is the node's error as the workflow's owner sees it
 * (decisions §7 `error: {node_id, message}`), so it names hosts, never URLs, whose paths and query
 * strings often carry tokens (a Slack webhook URL is itself the secret).
 */
export class IntegrationError extends Error {
  override readonly name = 'IntegrationError';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    // An expected outcome reported to a user, not a fault in this code: no stack to show or log.
    this.stack = `${this.name}: ${message}`;
  }
}

/** Most characters of a peer's answer quoted in an error. */
export const MAX_SNIPPET_LENGTH = 200;

/** A peer's answer as one short line: whitespace collapsed, at most MAX_SNIPPET_LENGTH characters. */
export function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_SNIPPET_LENGTH ? line : `${line.slice(0, MAX_SNIPPET_LENGTH - 1)}…`;
}

/** The host (and port, when not the default) of a URL the user configured, for messages. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an invalid URL';
  }
}

/** An outbound request that produced no response, as the node's error. */
export function outboundFailure(error: unknown, host: string): IntegrationError {
  if (!(error instanceof OutboundRequestError)) return new IntegrationError(`request to ${host} failed`, { cause: error });
  switch (error.reason) {
    case 'blocked':
    case 'timeout':
    case 'aborted':
    case 'invalid_url':
    case 'too_large':
      return new IntegrationError(error.message, { cause: error });
    case 'network':
    case 'invalid_request':
      return new IntegrationError(`request to ${host} failed: ${error.message}`, { cause: error });
  }
}
