/** An HTTP request handed to a server of the same process, body read whole. */
export interface InProcessHttpRequest {
  method: string;
  /** Path and query, as on the request line. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface InProcessHttpAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

/**
 * An HTTP server of this process called without a socket (the all-in-one mode's route from the
 * gateway's `/hooks` to the workflow-runner's ingress): the same routes, parsing and error answers
 * as over the network, without two HTTP stacks and a loopback connection per request. Rejects
 * when the server is not serving, as a refused connection would.
 */
export type InProcessHttp = (request: InProcessHttpRequest) => Promise<InProcessHttpAnswer>;

/** Headers a socket's HTTP stack sets or ends for itself; between servers of one process they mean nothing. */
const SOCKET_HEADERS = new Set(['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding', 'upgrade']);

/** `headers` without those a socket's HTTP stack owns, for a request or an answer handed on in process. */
export function withoutSocketHeaders<V>(headers: Record<string, V | undefined>): Record<string, V> {
  const kept: Record<string, V> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !SOCKET_HEADERS.has(name)) kept[name] = value;
  return kept;
}
