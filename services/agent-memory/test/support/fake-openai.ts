import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A local server speaking the OpenAI HTTP protocol (chat completions, plain and SSE, and
 * embeddings) for driving the real adapters through the real `openai` client. Each test scripts
 * how it answers and reads back what it was sent.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** True once the client hung up before the answer was complete. */
  aborted: boolean;
}

export interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type ChatScript =
  /** A normal answer; `content` defaults to "Echo: <last user message>". */
  | { kind: 'answer'; content?: string; model?: string; usage?: WireUsage | false; finishReason?: string | null }
  /** An HTTP error with an OpenAI-style `{error: {…}}` body. */
  | { kind: 'error'; status: number; message?: string; code?: string }
  /** Accept and never send a byte. */
  | { kind: 'stall' }
  /** Send the headers and the first chunk (or the start of the JSON body), then nothing more. */
  | { kind: 'stall-mid-answer' }
  /** 200 with this body (default: not JSON); streamed requests get it as one SSE `data:` line. */
  | { kind: 'garbage'; body?: string; contentType?: string }
  /** A well-formed answer with an empty `choices` list. */
  | { kind: 'no-choices' }
  /**
   * An answer asking for these calls (finish reason `tool_calls`), with optional text. Streamed,
   * each call's id and name come first and its arguments in pieces, the calls' chunks interleaved.
   */
  | { kind: 'tool-calls'; calls: { id?: string; name: string; arguments: string }[]; content?: string; usage?: WireUsage }
  /**
   * A server without structured outputs: a request carrying `response_format` gets an HTTP error
   * (default 400, its message naming the field) with an OpenAI-style body, or with `body` when
   * given (servers of other shapes); any other request is answered as `{ kind: 'answer', content }`.
   */
  | { kind: 'refuse-response-format'; status?: number; message?: string; body?: unknown; content?: string };

export type EmbeddingScript =
  | { kind: 'answer'; dimensions?: number; count?: number; reversed?: boolean; vectors?: unknown[] }
  | { kind: 'error'; status: number; message?: string; code?: string }
  | { kind: 'stall' }
  | { kind: 'garbage'; body?: string; contentType?: string };

export interface FakeOpenAI {
  /** e.g. http://127.0.0.1:40123/v1 */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  /** How every following chat completion request is answered. */
  chat(script: ChatScript): void;
  /** How the next requests are answered, one script each, before `chat`'s applies again. */
  chatNext(...scripts: ChatScript[]): void;
  embeddings(script: EmbeddingScript): void;
  close(): Promise<void>;
}

export const DEFAULT_WIRE_USAGE: WireUsage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
/** Vector length when a request names none. */
export const FAKE_EMBEDDING_DIMENSIONS = 8;

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let chatScript: ChatScript = { kind: 'answer' };
  const nextChatScripts: ChatScript[] = [];
  let embeddingScript: EmbeddingScript = { kind: 'answer' };

  const server = createServer((req, res) => {
    readBody(req).then((text) => {
      const record: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: parseJson(text), aborted: false };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.aborted = true;
      });
      if (req.method === 'POST' && record.path === '/v1/chat/completions') return answerChat(res, record.body, nextChatScripts.shift() ?? chatScript);
      if (req.method === 'POST' && record.path === '/v1/embeddings') return answerEmbeddings(res, record.body, embeddingScript);
      sendError(res, 404, `Unknown path ${record.path}`, 'not_found');
    }, () => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    chat: (script) => {
      chatScript = script;
    },
    chatNext: (...scripts) => {
      nextChatScripts.push(...scripts);
    },
    embeddings: (script) => {
      embeddingScript = script;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Stalled answers hold their sockets open; close() alone would wait for them forever.
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** A base URL on which nothing listens: connecting to it is refused. */
export async function refusedBaseURL(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

function answerChat(res: ServerResponse, body: unknown, script: ChatScript): void {
  const request = asRecord(body);
  const streamed = request['stream'] === true;
  const model = typeof request['model'] === 'string' ? request['model'] : 'fake-model';
  switch (script.kind) {
    case 'error':
      return sendError(res, script.status, script.message ?? `Scripted failure ${script.status}`, script.code ?? 'scripted');
    case 'stall':
      return;
    case 'refuse-response-format':
      if ('response_format' in request) {
        const status = script.status ?? 400;
        if (script.body !== undefined) return sendJson(res, status, script.body);
        return sendError(res, status, script.message ?? "Unsupported parameter: 'response_format' is not supported by this server.", 'unsupported_parameter');
      }
      return answerChat(res, body, { kind: 'answer', content: script.content });
    case 'garbage': {
      const text = script.body ?? '{"choices": [ this is not json';
      if (!streamed) return send(res, 200, script.contentType ?? 'application/json', text);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${text}\n\ndata: [DONE]\n\n`);
      return;
    }
    case 'no-choices':
      if (!streamed) return sendJson(res, 200, { id: 'chatcmpl-fake', object: 'chat.completion', model, choices: [], usage: DEFAULT_WIRE_USAGE });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: [DONE]\n\n');
      return;
    case 'tool-calls': {
      const calls = script.calls.map((call, index) => ({ id: call.id ?? `call_fake_${index + 1}`, type: 'function', function: { name: call.name, arguments: call.arguments } }));
      const usage = script.usage ?? DEFAULT_WIRE_USAGE;
      if (!streamed) {
        const message = { role: 'assistant', content: script.content ?? null, refusal: null, tool_calls: calls };
        return sendJson(res, 200, { id: 'chatcmpl-fake', object: 'chat.completion', created: 1_700_000_000, model, choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }], usage });
      }
      const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string =>
        `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk({ role: 'assistant', content: script.content ?? null }));
      calls.forEach((call, index) => res.write(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] })));
      // Arguments in three-character pieces, the calls taking turns, as providers interleave them.
      const pieces = calls.map((call) => call.function.arguments.match(/[\s\S]{1,3}/g) ?? []);
      for (let step = 0; pieces.some((list) => step < list.length); step += 1) {
        pieces.forEach((list, index) => {
          if (step < list.length) res.write(chunk({ tool_calls: [{ index, function: { arguments: list[step] } }] }));
        });
      }
      res.write(chunk({}, 'tool_calls'));
      if (asRecord(request['stream_options'])['include_usage'] === true) res.write(`data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    case 'stall-mid-answer':
    case 'answer': {
      const answer = script.kind === 'answer' ? script : { kind: 'answer' as const };
      const content = answer.content ?? `Echo: ${lastUserMessage(request)}`;
      const usage = answer.usage ?? DEFAULT_WIRE_USAGE;
      const answeredModel = answer.model ?? model;
      const finishReason = answer.finishReason === undefined ? 'stop' : answer.finishReason;
      if (!streamed) {
        const json = JSON.stringify({
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: answeredModel,
          choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finishReason }],
          ...(usage ? { usage } : {}),
        });
        if (script.kind === 'answer') return send(res, 200, 'application/json', json);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(json.slice(0, 20));
        return;
      }
      const withUsage = usage !== false && asRecord(request['stream_options'])['include_usage'] === true;
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
        `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: answeredModel, choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`;
      const delta = (piece: Record<string, unknown>, finish: string | null = null): unknown => ({ index: 0, delta: piece, logprobs: null, finish_reason: finish });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk([delta({ role: 'assistant', content: '' })]));
      const pieces = content.split(/(?<=\s)(?=\S)/);
      if (script.kind === 'stall-mid-answer') {
        res.write(chunk([delta({ content: pieces[0] ?? '' })]));
        return;
      }
      for (const piece of pieces) res.write(chunk([delta({ content: piece })]));
      if (finishReason !== null) res.write(chunk([delta({}, finishReason)]));
      if (withUsage && usage) res.write(chunk([], { usage }));
      // A stream without a finish reason is a cut-off one: it ends without [DONE] as well.
      res.end(finishReason === null ? '' : 'data: [DONE]\n\n');
      return;
    }
  }
}

function answerEmbeddings(res: ServerResponse, body: unknown, script: EmbeddingScript): void {
  const request = asRecord(body);
  switch (script.kind) {
    case 'error':
      return sendError(res, script.status, script.message ?? `Scripted failure ${script.status}`, script.code ?? 'scripted');
    case 'stall':
      return;
    case 'garbage':
      return send(res, 200, script.contentType ?? 'application/json', script.body ?? '{"data": [ not json');
    case 'answer': {
      const inputs = Array.isArray(request['input']) ? request['input'].map(String) : [String(request['input'])];
      const requested = typeof request['dimensions'] === 'number' ? request['dimensions'] : FAKE_EMBEDDING_DIMENSIONS;
      const dimensions = script.dimensions ?? requested;
      const base64 = request['encoding_format'] === 'base64';
      let data = inputs.slice(0, script.count ?? inputs.length).map((text, index) => {
        const vector = script.vectors?.[index] ?? fakeVector(text, dimensions);
        const embedding = base64 && Array.isArray(vector) ? Buffer.from(new Float32Array(vector.map(Number)).buffer).toString('base64') : vector;
        return { object: 'embedding', index, embedding };
      });
      if (script.reversed) data = data.reverse();
      const tokens = inputs.join(' ').split(/\s+/).length;
      return sendJson(res, 200, { object: 'list', data, model: request['model'], usage: { prompt_tokens: tokens, total_tokens: tokens } });
    }
  }
}

/** Deterministic, never zero, deliberately not unit length (the adapter must normalise). */
export function fakeVector(text: string, dimensions: number): number[] {
  let seed = 7;
  for (const char of text) seed = (seed * 31 + (char.codePointAt(0) ?? 0)) % 1_000_003;
  return Array.from({ length: dimensions }, (_, index) => ((seed * (index + 3)) % 13) - 6 + 0.25);
}

function lastUserMessage(request: Record<string, unknown>): string {
  const messages = Array.isArray(request['messages']) ? request['messages'] : [];
  const users = messages.map(asRecord).filter((message) => message['role'] === 'user');
  const content = users.at(-1)?.['content'];
  return typeof content === 'string' ? content : '';
}

function sendError(res: ServerResponse, status: number, message: string, code: string): void {
  sendJson(res, status, { error: { message, type: status === 429 ? 'rate_limit_error' : 'server_error', param: null, code } });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json', JSON.stringify(value));
}

function send(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
