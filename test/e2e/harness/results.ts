import { ApiResponseError, type ApiError, type ApiErrorCode } from '@agent-platform/client';
import { expect } from 'vitest';

/** What a typed call answers (`{ data, response }` or `{ error, response }`). */
export interface CallResult<Data = unknown> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/** A typed call's result, or what a raw request (`Api.request`) answers. */
export type Answer = CallResult | { status: number; headers: Headers; body: unknown };

function statusAndBody(answer: Answer): { status: number; body: unknown } {
  return 'response' in answer ? { status: answer.response.status, body: answer.error ?? answer.data } : answer;
}

export function headersOf(answer: Answer): Headers {
  return 'response' in answer ? answer.response.headers : answer.headers;
}

/**
 * What a failed expectation shows of an answer: its body, and for a 5xx its request id. A 5xx
 * body hides its cause by design; the gateway logs it with that id, and the distributed harness
 * prints those lines when the run ends.
 */
function described(status: number, body: unknown, headers: Headers): string {
  const requestId = headers.get('x-request-id');
  return status >= 500 && requestId ? `${JSON.stringify(body)} (request ${requestId}: its cause is in the gateway's warnings)` : JSON.stringify(body);
}

/** The data of a call that must answer `status`; otherwise the test fails showing the error body. */
export function expectStatus<Data>(result: CallResult<Data>, status = 200): Data {
  expect(result.response.status, described(result.response.status, result.error, result.response.headers)).toBe(status);
  return result.data as Data;
}

/**
 * A failure in the API's error format (decisions §2): `status`, `code`, a message, the `fields`
 * named in `details` when given, and nothing of the internals (stack frames, SQL).
 */
export function expectError(answer: Answer, status: number, code: ApiErrorCode, fields?: string[]): ApiError {
  const { status: actual, body } = statusAndBody(answer);
  expect(actual, described(actual, body, headersOf(answer))).toBe(status);
  expect(body).toMatchObject({ error: code });
  const error = body as ApiError;
  expect(typeof error.message).toBe('string');
  if (fields) expect(error.details?.map((detail) => detail.field).sort()).toEqual([...fields].sort());
  expect(JSON.stringify(error)).not.toMatch(/at .*\.ts:\d+|stack|SELECT |INSERT /);
  return error;
}

/** The status a typed call answers, for calls whose body does not matter. */
export async function statusOf(call: Promise<{ response: Response }>): Promise<number> {
  return (await call).response.status;
}

/**
 * How a streamed call that must fail before its stream begins was refused (`streamChat` throws
 * ApiResponseError then), as a call's result for `expectError`.
 */
export async function refusalOf(events: AsyncGenerator<unknown>): Promise<CallResult> {
  const thrown = await events.next().then(
    async () => void (await events.return(undefined)),
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(ApiResponseError);
  const { response, body } = thrown as ApiResponseError;
  return { response, error: body };
}
