import { ChatServiceService, type StreamChatResponse } from '@agent-platform/proto/agents/v1/chat';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { createLogger } from '../logger.js';
import { GrpcChannel } from './client.js';
import { GrpcServer, type Handlers } from './server.js';

// Server streaming through GrpcServer and GrpcChannel, on ChatService's StreamChat.
const server = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) });
let address: string;
let released: () => void = () => undefined;
/** One sentinel per endless stream: resolves when its generator has been closed by a cancelled call. */
const endlessStreams: Promise<void>[] = [];

function delta(text: string): StreamChatResponse {
  return { delta: text, runId: 'run_stream' };
}

const refused: Handlers<typeof ChatServiceService>['chat'] = () => Promise.reject(new Error('not used'));

beforeAll(async () => {
  server.add('agentplatform.agents.v1.ChatService', ChatServiceService, {
    chat: refused,
    listSessions: () => Promise.reject(new Error('not used')),
    listSessionMessages: () => Promise.reject(new Error('not used')),
    deleteSession: () => Promise.reject(new Error('not used')),
    decideToolCall: () => Promise.reject(new Error('not used')),
    streamDecideToolCall: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('not used')) }) }),
    async *streamChat(request, ctx) {
      if (request.message === 'refuse') throw new DomainError('insufficient_credits', 'No credits left.');
      if (request.message === 'endless') {
        let closeEndless: () => void = () => undefined;
        endlessStreams.push(new Promise((resolve) => (closeEndless = resolve)));
        try {
          for (let n = 0; ; n += 1) {
            yield delta(`piece ${n} `);
            // Paced by the test: the next piece once the previous was read, or the call is gone.
            await Promise.race([new Promise<void>((resolve) => (released = resolve)), once(ctx.signal, 'abort')]);
          }
        } finally {
          closeEndless();
        }
      }
      for (const word of request.message.split(' ')) yield delta(word);
      if (request.message.startsWith('fail')) throw new DomainError('upstream_error', 'The model stopped answering.');
      if (request.message.startsWith('crash')) throw new Error('secret internals');
      yield { completed: { id: 'msg_1', role: 'assistant', content: request.message, usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 }, sessionId: 'ses_1', model: 'offline', createdAt: new Date(0), status: 'completed', toolCalls: [], memories: [], citations: [], credits: 1, runId: 'run_stream' }, runId: 'run_stream' };
    },
  });
  const port = await server.listen('127.0.0.1', 0);
  address = `127.0.0.1:${port}`;
});

afterAll(async () => {
  await server.stop(1_000);
});

// The same streams over the network and through the in-process transport.
const transports = [
  { transport: 'HTTP/2', open: () => new GrpcChannel(address, { defaultDeadlineMs: 5_000 }) },
  { transport: 'the in-process transport', open: () => new GrpcChannel(server.inProcess(), { defaultDeadlineMs: 5_000 }) },
];

async function collect(channel: GrpcChannel, message: string): Promise<{ events: StreamChatResponse[]; error?: unknown }> {
  const client = channel.client(ChatServiceService);
  const events: StreamChatResponse[] = [];
  try {
    for await (const event of client.streamChat({ agentId: 'agt_1', message })) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

describe.each(transports)('server streaming over $transport', ({ open }) => {
  let channel: GrpcChannel;
  beforeAll(() => {
    channel = open();
  });
  afterAll(() => channel.close());


  it('delivers every message in order, then ends', async () => {
    const { events, error } = await collect(channel, 'one two three');
    expect(error).toBeUndefined();
    expect(events.map((event) => event.delta ?? event.completed?.content)).toEqual(['one', 'two', 'three', 'one two three']);
  });

  it('ends with the DomainError when the handler fails before the first message', async () => {
    const { events, error } = await collect(channel, 'refuse');
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'insufficient_credits', message: 'No credits left.' });
  });

  it('delivers what was written, then the DomainError of a failure mid-stream', async () => {
    const { events, error } = await collect(channel, 'fail now');
    expect(events.map((event) => event.delta)).toEqual(['fail', 'now']);
    expect(error).toMatchObject({ code: 'upstream_error' });
  });

  it('hides an unexpected failure as internal_error', async () => {
    const { error } = await collect(channel, 'crash now');
    expect(error).toMatchObject({ code: 'internal_error', message: 'An unexpected error occurred.' });
    expect(String((error as Error).message)).not.toContain('secret');
  });

  it('cancels the call when the client stops reading, which closes the handler', async () => {
    const client = channel.client(ChatServiceService);
    const received: string[] = [];
    for await (const event of client.streamChat({ agentId: 'agt_1', message: 'endless' })) {
      received.push(event.delta ?? '');
      if (received.length === 3) break;
      released();
    }
    expect(received).toEqual(['piece 0 ', 'piece 1 ', 'piece 2 ']);
    await endlessStreams.at(-1); // the sentinel: the server-side generator's finally ran
  });

  it('cancels a call waiting for its next message as soon as the signal aborts', async () => {
    const client = channel.client(ChatServiceService);
    const aborter = new AbortController();
    const received: string[] = [];
    const reading = (async () => {
      for await (const event of client.streamChat({ agentId: 'agt_1', message: 'endless' }, { signal: aborter.signal })) {
        received.push(event.delta ?? '');
        // Never released: the server waits until the call is cancelled.
        if (received.length === 1) aborter.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ code: expect.any(String) });
    expect(received).toEqual(['piece 0 ']);
  });
});
