import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import type { ChatCompletion, ChatMessage, ChatModel, ChatRequest, ToolCall, ToolDefinition } from './chat-model.js';
import { DECISIONS_FORMAT, FACTS_FORMAT, offlineDecisions, offlineFacts, type DecisionsQuestion, type FactsQuestion } from './extraction-protocol.js';
import { JUDGE_FORMAT, offlineJudgement, type JudgeAnswer, type JudgeQuestion } from './judge-protocol.js';
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
 *
 * It uses tools as decisions §12 says: when the user's message names offered tools as words, it
 * calls each of them with the first JSON object in the message (else `{}`), once; given their
 * results, it answers quoting them.
 *
 * It answers memory extraction's two questions (decisions §14, extraction-protocol.ts) by the
 * offline rule: asked for FACTS_FORMAT or DECISIONS_FORMAT, it reads the last user message as the
 * question's JSON and answers one JSON document of that schema, without tool calls. A message that
 * is not such a question gets the schema's empty answer, never an error: memory then stays as it
 * was. Asked for JUDGE_FORMAT (an eval's llm_judge, judge-protocol.ts), it grades the question in
 * the last user message by the offline rule of §16; a message that is not such a question scores 0
 * with the reason, never an error. Any other `responseFormat` is beyond it: it answers as if none
 * were asked.
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
  const structured = extractionAnswer(request) ?? judgeAnswer(request);
  if (structured !== undefined) return { content: structured, toolCalls: [], usage: estimateUsage(request.messages, structured, request.tools), model: OFFLINE_MODEL };
  const toolCalls = callsFor(request);
  const content = toolCalls.length > 0 ? '' : reply(request.messages);
  return { content, toolCalls, usage: estimateUsage(request.messages, content, request.tools, toolCalls), model: OFFLINE_MODEL };
}

// The questions' shapes, checked: the JSON comes from a caller, and a bad one must not throw.
const factsQuestion: z.ZodType<FactsQuestion> = z.object({ user: z.string(), assistant: z.string() });
const decisionsQuestion: z.ZodType<DecisionsQuestion> = z.object({
  facts: z.array(z.object({ fact: z.string(), nearest: z.array(z.object({ id: z.string(), text: z.string(), score: z.number() })) })),
});

/** The JSON answer to memory extraction's question, or undefined when the request asks none. */
function extractionAnswer(request: ChatRequest): string | undefined {
  const format = request.responseFormat?.name;
  if (format !== FACTS_FORMAT.name && format !== DECISIONS_FORMAT.name) return undefined;
  const question = lastUserJson(request.messages);
  if (format === FACTS_FORMAT.name) {
    const facts = factsQuestion.safeParse(question);
    return JSON.stringify({ facts: facts.success ? offlineFacts(facts.data.user) : [] });
  }
  const decisions = decisionsQuestion.safeParse(question);
  return JSON.stringify(decisions.success ? offlineDecisions(decisions.data) : { decisions: [] });
}

const judgeQuestion: z.ZodType<JudgeQuestion> = z.object({ rubric: z.string(), input: z.string(), output: z.string(), expected: z.string().optional() });

/** The JSON answer to an eval judge's question, or undefined when the request asks none. */
function judgeAnswer(request: ChatRequest): string | undefined {
  if (request.responseFormat?.name !== JUDGE_FORMAT.name) return undefined;
  const question = judgeQuestion.safeParse(lastUserJson(request.messages));
  const answer: JudgeAnswer = question.success
    ? offlineJudgement(question.data)
    : { score: 0, reason: 'The question was not understood: it must be JSON with a rubric, the input and the output as text.' };
  return JSON.stringify(answer);
}

/** The last user message parsed as JSON; undefined when there is none or it is not JSON. */
function lastUserJson(messages: readonly ChatMessage[]): unknown {
  const user = currentTurn(messages).user;
  if (user === undefined) return undefined;
  try {
    return JSON.parse(user.content);
  } catch {
    return undefined;
  }
}

/** The turn so far: the last user message, and what came after it (tool calls and results). */
function currentTurn(messages: readonly ChatMessage[]): { user: ChatMessage | undefined; after: readonly ChatMessage[] } {
  const index = messages.findLastIndex((message) => message.role === 'user');
  return index < 0 ? { user: undefined, after: messages } : { user: messages[index], after: messages.slice(index + 1) };
}

/** Calls only once a turn: after results come back, it answers. */
function callsFor(request: ChatRequest): ToolCall[] {
  const tools = request.tools ?? [];
  const { user, after } = currentTurn(request.messages);
  if (tools.length === 0 || request.toolChoice === 'none' || user === undefined || after.length > 0) return [];
  const named = tools
    .map((tool) => ({ tool, at: wordIndex(user.content, tool) }))
    .filter((found) => found.at >= 0)
    .sort((a, b) => a.at - b.at);
  const args = JSON.stringify(firstJsonObject(user.content) ?? {});
  return named.map(({ tool }, index) => ({ id: `call_offline_${index + 1}`, name: tool.name, arguments: args }));
}

/** Where the tool's name stands as a whole word (names hold letters, digits, _ and -), or -1. */
function wordIndex(text: string, tool: ToolDefinition): number {
  const name = tool.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9_-])${name}(?![A-Za-z0-9_-])`).exec(text)?.index ?? -1;
}

/** The first `{…}` in the text that parses as a JSON object. */
export function firstJsonObject(text: string): Record<string, unknown> | undefined {
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    const end = closingBrace(text, start);
    if (end < 0) continue;
    try {
      const value: unknown = JSON.parse(text.slice(start, end + 1));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // Not JSON from this brace: try the next one.
    }
  }
  return undefined;
}

/** The index of the brace that closes the one at `start`, skipping braces inside JSON strings. */
function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return -1;
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
    // Numbered as the context numbers them, so an answer's [n] is the citation of index n.
    memories.forEach((memory, index) => lines.push(`[${index + 1}] "${quote(memory)}"`));
  }
  const results = toolResults(currentTurn(messages).after);
  if (results.length > 0) {
    lines.push('', `Tool results (${results.length}):`);
    results.forEach((result, index) => lines.push(`${index + 1}. ${result.name}: "${quote(result.content)}"`));
  }
  return lines.join('\n');
}

/** The results given back in this turn, each under the name of the call it answers. */
function toolResults(after: readonly ChatMessage[]): { name: string; content: string }[] {
  const names = new Map<string, string>();
  const results: { name: string; content: string }[] = [];
  for (const message of after) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) names.set(call.id, call.name);
    if (message.role === 'tool') results.push({ name: names.get(message.toolCallId) ?? 'unknown tool', content: message.content });
  }
  return results;
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
