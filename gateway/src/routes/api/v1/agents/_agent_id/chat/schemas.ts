import { characters, CHAT_MESSAGE_MAX, citationBody } from '@agent-platform/kit';
import type { ChatResponse, StreamChatResponse, ToolCall, Usage } from '@agent-platform/proto/agents/v1/chat';
import { z } from 'zod';
import type { ServerSentEvent } from '../../../../../../http/sse.js';
import { EndUserId, iso, isoOrNull, Timestamp } from '../../../../../../http/schemas.js';
import { Citations } from '../../../memory/documents/schemas.js';
import { SearchResultSchema, searchResultBody } from '../../../memory/schemas.js';

/** decisions §16: a turn may run with a past version of its agent's settings. */
export const AgentVersionNumber = z
  .int()
  .min(1)
  .describe("Runs the turn with this version of the agent's settings (GET /agents/{agent_id}/versions); absent: the current one. An unknown version is 404.");

export const ChatBody = z.object({
  // The service decides too (and refuses a blank one); the bound here spares it a body it would refuse.
  message: z
    .string()
    .min(1)
    .max(CHAT_MESSAGE_MAX)
    .describe(`What the user says: 1..${characters(CHAT_MESSAGE_MAX)} characters, not blank.`),
  session_id: z
    .string()
    .min(1)
    .optional()
    .describe("Continues that session of this agent (its earlier turns are in the model's context); absent: a new session is started and returned."),
  user_id: EndUserId.optional().describe(
    "The end user of your application this turn is for (decisions §14): the turn sees only their memories and the shared ones, and the facts extracted from it are theirs. A new session takes it; a later turn defaults to the session's, and naming another is 422.",
  ),
  agent_version: AgentVersionNumber.optional(),
  stream: z.boolean().optional().describe('true: answer text/event-stream (see the 200 response) instead of one JSON reply.'),
}).meta({ examples: [{ message: 'Where is my order #1042?', session_id: 'ses_01JD0F3G4H5J6K7M8N9P0QRSTV', user_id: 'customer-8812' }] });

export const UsageSchema = z
  .object({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() })
  .meta({ id: 'TokenUsage', description: "Tokens of a turn, as the model provider counts them (or a real tokenizer when it reports none)." });

export const TOOL_CALL_STATUSES = ['awaiting_approval', 'approved', 'completed', 'failed', 'rejected'] as const;

export const ToolCallSchema = z
  .object({
    id: z.string().describe('`call_…`: what approve and reject name.'),
    tool_id: z.string().nullable().describe('The tool that runs it; null when the model named no tool of the agent.'),
    name: z.string().describe("The name the model called: the tool's, or `<tool>__<remote tool>` for an MCP server's."),
    arguments: z.unknown().describe('The arguments the model gave: a JSON object, or the text it wrote when that was not one.'),
    status: z
      .enum(TOOL_CALL_STATUSES)
      .describe('awaiting_approval: waits for a decision; approved: decided, running; completed, failed (error says why), rejected: final.'),
    result: z.unknown().describe('completed calls: the result (JSON when the tool answered JSON, else text; cut at 64 KiB); otherwise null.'),
    error: z.string().nullable().describe('failed and rejected calls: why; given to the model as the result.'),
    error_code: z
      .enum(['forbidden', 'unauthorized'])
      .nullable()
      .describe(
        "Set when the platform refused the call for the turn's credential (decisions §12): forbidden, when it may not do what the tool does (a workflow tool needs workflows:execute); unauthorized, when it was revoked meanwhile. Nothing ran. Given to the model with the error.",
      ),
    duration_ms: z.int().nullable(),
    decided_by: z.string().nullable().describe('Who approved or rejected it (the user, or the creator of the API key used).'),
    decided_at: Timestamp.nullable(),
    comment: z.string().nullable().describe("The decision's comment."),
  })
  .meta({ id: 'ToolCall', description: 'A call of one of the agent\'s tools that the model asked for in a turn.' });

export const ChatMessageSchema = z
  .object({
    id: z.string(),
    role: z.string().describe('assistant'),
    content: z.string().describe('The answer; may be empty when the turn stopped at calls awaiting approval.'),
    status: z
      .enum(['completed', 'awaiting_approval'])
      .describe('awaiting_approval: the turn stopped at tool calls that need a decision; approve or reject each to continue it.'),
    tool_calls: z.array(ToolCallSchema).describe('Every tool call of the turn, in the order the model asked for them.'),
    usage: UsageSchema.describe("The whole turn's, every model round summed."),
    credits: z.int().describe("What the turn was charged so far: each model round ceil(total_tokens / 1000) credits, at least 1 (decisions §9)."),
    memories: z
      .array(SearchResultSchema)
      .describe("The memories put in the turn's context, most relevant first: the agent's items this turn's end user may see (decisions §14), retrieved for the user's message."),
    citations: Citations,
    session_id: z.string().describe('The session the turn belongs to; pass it back to continue the conversation.'),
    run_id: z.string().describe('The run this turn is (decisions §16): GET /runs/{run_id} shows its steps.'),
    model: z.string().describe('The model that answered; "offline" for the built-in model.'),
    created_at: Timestamp,
  })
  .meta({ id: 'ChatMessage', description: "The agent's reply to a chat turn." });

export const STREAM_DESCRIPTION = [
  'With `stream: true`: server-sent events: the tool calls and their results as they happen, one',
  "event per text piece of the answer, then one to finish. Every event's data names the turn's run",
  '(`run_id`, decisions §16).',
  '',
  '```',
  'event: tool.call',
  'data: {"id":"call_…","name":"<tool>","arguments":{…},"run_id":"run_…"}',
  '',
  'event: tool.result',
  'data: {"id":"call_…","status":"completed","result":…,"run_id":"run_…"}   (or "status":"failed","error":"…", and "error_code" when refused)',
  '',
  'event: message.delta',
  'data: {"content":"<text piece>","run_id":"run_…"}',
  '',
  'event: message.completed',
  'data: <the ChatMessage the non-streamed call answers; its content is the deltas of its last round joined>',
  '```',
  '',
  'A failure after the stream began is one `event: error` whose data is the Error object, and the',
  'stream ends. A failure before it began is an ordinary JSON error response with its status.',
  'Closing the connection early cancels the turn; a turn cancelled before it completes is neither',
  'stored nor charged.',
].join('\n');

export function usageBody(usage: Usage | undefined): z.output<typeof UsageSchema> {
  return { prompt_tokens: usage?.promptTokens ?? 0, completion_tokens: usage?.completionTokens ?? 0, total_tokens: usage?.totalTokens ?? 0 };
}

export function toolCallBody(call: ToolCall): z.output<typeof ToolCallSchema> {
  return {
    id: call.id,
    tool_id: call.toolId ?? null,
    name: call.name,
    arguments: parsedJson(call.argumentsJson),
    status: call.status as (typeof TOOL_CALL_STATUSES)[number],
    result: call.resultJson === undefined ? null : parsedJson(call.resultJson),
    error: call.error ?? null,
    error_code: refusalCode(call.errorCode),
    duration_ms: call.durationMs ?? null,
    decided_by: call.decidedBy ?? null,
    decided_at: isoOrNull(call.decidedAt),
    comment: call.comment ?? null,
  };
}

export function chatMessageBody(reply: ChatResponse): z.output<typeof ChatMessageSchema> {
  return {
    id: reply.id,
    role: reply.role,
    content: reply.content,
    status: reply.status === 'awaiting_approval' ? 'awaiting_approval' : 'completed',
    tool_calls: reply.toolCalls.map(toolCallBody),
    usage: usageBody(reply.usage),
    credits: reply.credits,
    memories: reply.memories.map(searchResultBody),
    citations: reply.citations.map(citationBody),
    session_id: reply.sessionId,
    run_id: reply.runId,
    model: reply.model,
    created_at: iso(reply.createdAt),
  };
}

/** JSON text from agent-memory as a value; text that is not JSON stays text. */
/** The refusal codes a call may carry; anything else from a newer agent-memory reads as none. */
function refusalCode(code: string | undefined): 'forbidden' | 'unauthorized' | null {
  return code === 'forbidden' || code === 'unauthorized' ? code : null;
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The events of a streamed turn (decisions §6, §12): tool calls and results, a delta per text
 * piece, then exactly one completed. A stream that ends without its completed event is an
 * upstream defect, reported as an error event.
 */
export async function* turnEvents(events: AsyncIterable<StreamChatResponse>): AsyncGenerator<ServerSentEvent> {
  let completed = false;
  for await (const event of events) {
    if (completed) continue;
    const run_id = event.runId;
    if (event.completed) {
      completed = true;
      yield { event: 'message.completed', data: chatMessageBody(event.completed) };
    } else if (event.toolCall) {
      yield { event: 'tool.call', data: { id: event.toolCall.id, name: event.toolCall.name, arguments: parsedJson(event.toolCall.arguments), run_id } };
    } else if (event.toolResult) {
      const { id, status, resultJson, error, errorCode } = event.toolResult;
      const code = refusalCode(errorCode);
      const outcome = status === 'completed' ? { result: parsedJson(resultJson ?? 'null') } : { error: error ?? status, ...(code ? { error_code: code } : {}) };
      yield { event: 'tool.result', data: { id, status, ...outcome, run_id } };
    } else if (event.delta !== undefined) {
      yield { event: 'message.delta', data: { content: event.delta, run_id } };
    }
  }
  if (!completed) throw new Error('agent-memory ended a streamed chat turn without its completed event.');
}
