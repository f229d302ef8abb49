import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ChatCompletion, ChatMessage, ChatModel, ChatRequest } from './chat-model.js';
import { memoriesIn } from './prompt.js';
import { estimateUsage } from './usage.js';

export const OFFLINE_MODEL = 'offline';

/** Longest quotation of the user's message or of one memory, in characters: replies stay small. */
const QUOTE_LIMIT = 500;

/**
 * The built-in model of decisions §6 for when no LLM is configured: no network, and the same
 * request always gets the same reply. It says what it is, echoes the user's last message, counts
 * the session's earlier turns and quotes the memories the caller put in the system message
 * (`memoryContext` of prompt.ts), so chat, sessions, retrieval and credits can all be exercised
 * and checked without a provider.
 */
export class OfflineChatModel implements ChatModel {
  readonly name = OFFLINE_MODEL;

  complete(request: ChatRequest): Promise<ChatCompletion> {
    // A throw inside the executor rejects: an aborted request rejects with the signal's reason.
    return new Promise((resolve) => {
      request.signal?.throwIfAborted();
      resolve(completion(request));
    });
  }

  async *stream(request: ChatRequest): AsyncGenerator<string, ChatCompletion, void> {
    request.signal?.throwIfAborted();
    const answer = completion(request);
    for (const piece of wordPieces(answer.content)) {
      // Yield the event loop between pieces, as a network stream would; an abort lands in between.
      await nextTurn();
      request.signal?.throwIfAborted();
      yield piece;
    }
    return answer;
  }
}

function completion(request: ChatRequest): ChatCompletion {
  const content = reply(request.messages);
  return { content, usage: estimateUsage(request.messages, content), model: OFFLINE_MODEL };
}

function reply(messages: readonly ChatMessage[]): string {
  const userTurns = messages.filter((message) => message.role === 'user');
  const last = userTurns.at(-1);
  const earlier = Math.max(0, userTurns.length - 1);
  const memories = memoriesIn(messages);

  const lines = [
    'I am the built-in offline model: no language model is configured, so this reply is assembled ' +
      "from your message and the agent's memories, not generated. To get real answers, set " +
      'LLM_BASE_URL, LLM_API_KEY and LLM_MODEL.',
    '',
    last === undefined ? 'You sent no message.' : `You said: "${quote(last.content)}"`,
    earlier === 0
      ? 'This is the first turn of this session.'
      : `This session has ${earlier} earlier ${earlier === 1 ? 'turn' : 'turns'}.`,
    '',
  ];
  if (memories.length === 0) {
    lines.push('I was given no relevant memories for this message.');
  } else {
    lines.push(`Relevant memories (${memories.length}):`);
    memories.forEach((memory, index) => lines.push(`${index + 1}. "${quote(memory)}"`));
  }
  return lines.join('\n');
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= QUOTE_LIMIT) return flat;
  // Never end on half a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(flat.charAt(QUOTE_LIMIT - 1)) ? QUOTE_LIMIT - 1 : QUOTE_LIMIT;
  return `${flat.slice(0, end)}…`;
}

/** Word-sized pieces that concatenate back to `text` exactly (each keeps its trailing spaces). */
export function wordPieces(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter((piece) => piece.length > 0);
}
