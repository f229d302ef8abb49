import { DomainError, systemClock, TimeoutError, type Clock } from '@agent-platform/kit';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

/** Who failed, as the client reads it in the error message. */
export type Upstream = 'language model provider' | 'embedding provider';

/** An answer that arrived but cannot be used (wrong shape, no choices, wrong dimension…). */
export class MalformedAnswer extends Error {
  override readonly name = 'MalformedAnswer';
}

/**
 * One call's time bound, and the signal that carries it together with the caller's abort. The
 * SDK's own `timeout` stops guarding a stream once its headers arrive, so a provider that stalls
 * mid-answer would hold the request forever; this timer is restarted on every chunk instead,
 * which bounds each silence without cutting off a long answer that keeps flowing.
 */
export class Deadline {
  readonly signal: AbortSignal;
  readonly #controller = new AbortController();
  /** Aborted to stop the current bound (a pause or a restart). */
  #running: AbortController | undefined;
  #expired = false;
  #streaming = false;

  constructor(
    readonly timeoutMs: number,
    private readonly caller: AbortSignal | undefined,
    private readonly clock: Clock = systemClock,
  ) {
    this.signal = caller ? AbortSignal.any([caller, this.#controller.signal]) : this.#controller.signal;
    this.restart();
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** Starts the bound afresh; `streaming` marks that the answer has begun (changes the message). */
  restart(streaming = this.#streaming): void {
    this.pause();
    this.#streaming = streaming;
    const running = new AbortController();
    this.#running = running;
    void this.clock.sleep(this.timeoutMs, running.signal).then(() => {
      if (running.signal.aborted) return;
      this.#expired = true;
      this.#controller.abort(new TimeoutError(`no answer within ${this.timeoutMs} ms`));
    });
  }

  /** Stops the clock while our own consumer, not the provider, is the one taking its time. */
  pause(): void {
    this.#running?.abort();
    this.#running = undefined;
  }

  /**
   * What to throw for `error`: the caller's own abort reason when the caller went away, else an
   * upstream_error. The SDK ends an aborted stream quietly, so this is also asked after a loop.
   */
  failure(error: unknown, upstream: Upstream): unknown {
    if (this.#expired) {
      const message = this.#streaming
        ? `The ${upstream} stopped sending its answer for ${this.timeoutMs} ms.`
        : `The ${upstream} did not answer within ${this.timeoutMs} ms.`;
      return new DomainError('upstream_error', message, { cause: error });
    }
    if (this.caller?.aborted) return this.caller.reason;
    if (error instanceof DomainError) return error;
    return new DomainError('upstream_error', describe(error, upstream, this.timeoutMs), { cause: error });
  }

  /** Whether the work was cut short by this deadline or by the caller (check after a loop ends). */
  get interrupted(): boolean {
    return this.#expired || this.caller?.aborted === true;
  }
}

function describe(error: unknown, upstream: Upstream, timeoutMs: number): string {
  if (error instanceof APIConnectionTimeoutError) return `The ${upstream} did not answer within ${timeoutMs} ms.`;
  if (error instanceof APIConnectionError) {
    const code = systemCode(error);
    return `The ${upstream} could not be reached${code ? ` (${code})` : ''}.`;
  }
  if (error instanceof APIError) {
    const detail = providerMessage(error);
    if (error.status === undefined) return `The ${upstream} reported an error: ${detail}`;
    // Its text may echo part of the platform's key; the status says enough to the operator.
    if (error.status === 401 || error.status === 403) return `The ${upstream} refused the platform's credentials (HTTP ${error.status}).`;
    return `The ${upstream} answered HTTP ${error.status}: ${detail}`;
  }
  if (error instanceof MalformedAnswer || error instanceof SyntaxError) {
    return `The ${upstream} sent an answer that could not be understood: ${error.message}`;
  }
  return `The ${upstream} request failed: ${error instanceof Error ? clip(error.message) : 'unknown error'}.`;
}

function providerMessage(error: { error: unknown; message: string }): string {
  const body: unknown = error.error;
  const message = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['message'] : undefined;
  return clip(typeof message === 'string' && message.length > 0 ? message : error.message);
}

/** ECONNREFUSED, ENOTFOUND…: the first `code` along the cause chain (undici nests it). */
function systemCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as Record<string, unknown>)['code'];
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    current = (current as Record<string, unknown>)['cause'];
  }
  return undefined;
}

function clip(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
