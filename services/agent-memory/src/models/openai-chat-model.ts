import type { Clock } from '@agent-platform/kit';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { ChatCompletion, ChatMessage, ChatModel, ChatRequest, ToolCall } from './chat-model.js';
import type { ResponseFormat } from './extraction-protocol.js';
import { DEFAULT_TIMEOUT_MS, openAIClient, parseAnswer, type OpenAICompatibleOptions } from './openai-client.js';
import { Deadline, MalformedAnswer } from './upstream.js';
import { estimateUsage, providerUsage, usageOf, countPromptTokens, countTextTokens } from './usage.js';

export interface OpenAIChatModelOptions extends OpenAICompatibleOptions {
  /** LLM_MODEL: used when a request names no model of its own. */
  model: string;
  /**
   * The request field for `maxTokens`. `max_tokens` is what Ollama, vLLM and llama.cpp read;
   * OpenAI's reasoning models accept only `max_completion_tokens`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
}

// Only what we read is checked; servers add fields (and omit `id`, `created`, `usage`) freely.
const completionAnswer = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(z.object({ id: z.string().min(1), function: z.object({ name: z.string().min(1), arguments: z.string() }) })).nullish(),
        }),
      }),
    )
    .min(1, 'no choices'),
  usage: z.unknown().optional(),
});

const chunkAnswer = z.object({
  model: z.string().nullish(),
  // Empty in the usage chunk, and in Azure's leading content-filter chunk.
  choices: z.array(
    z.object({
      delta: z
        .object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          // A call arrives in fragments: its id and name first, its arguments' JSON text in pieces.
          tool_calls: z
            .array(
              z.object({
                index: z.number().int().min(0),
                id: z.string().nullish(),
                function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
              }),
            )
            .nullish(),
        })
        .nullish(),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: z.unknown().optional(),
});

type ToolCallFragment = NonNullable<NonNullable<NonNullable<z.infer<typeof chunkAnswer>['choices'][number]['delta']>['tool_calls']>>[number];

/** Joins a stream's tool-call fragments, by their index, into whole calls. */
class ToolCallAssembly {
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();

  add(fragment: ToolCallFragment): void {
    const call = this.#calls.get(fragment.index) ?? { id: '', name: '', arguments: '' };
    if (fragment.id) call.id = fragment.id;
    if (fragment.function?.name) call.name += fragment.function.name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
    this.#calls.set(fragment.index, call);
  }

  calls(): ToolCall[] {
    const calls = [...this.#calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    if (calls.some((call) => call.id === '' || call.name === '')) throw new MalformedAnswer('chat completion chunk: a tool call came without its id or name');
    return calls;
  }
}

/** Any OpenAI-compatible chat completions server: OpenAI, Ollama, vLLM, llama.cpp, LiteLLM… */
export class OpenAIChatModel implements ChatModel {
  readonly name: string;
  readonly #client: OpenAI;
  readonly #timeoutMs: number;
  readonly #clock: Clock | undefined;
  readonly #maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Cleared once the server refuses `response_format` (no structured outputs): asking again would only fail again. */
  #sendsResponseFormat = true;

  constructor(options: OpenAIChatModelOptions) {
    this.name = options.model;
    this.#client = openAIClient(options);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock;
    this.#maxTokensField = options.maxTokensField ?? 'max_tokens';
  }

  async complete(request: ChatRequest): Promise<ChatCompletion> {
    const deadline = new Deadline(this.#timeoutMs, request.signal, this.#clock);
    try {
      const raw: unknown = await this.#send(request, deadline, (body) =>
        this.#client.chat.completions.create({ ...body, stream: false }, { signal: deadline.signal, timeout: this.#timeoutMs }),
      );
      const answer = parseAnswer(completionAnswer, raw, 'chat completion');
      const message = answer.choices[0]?.message;
      const toolCalls = (message?.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      // Text may be null when the answer is tool calls; with neither, there is no answer.
      const content = message?.content ?? message?.refusal ?? (toolCalls.length > 0 ? '' : undefined);
      if (typeof content !== 'string') throw new MalformedAnswer('chat completion: the answer has no text');
      return {
        content,
        toolCalls,
        usage: providerUsage(answer.usage) ?? estimateUsage(request.messages, content, request.tools, toolCalls),
        model: answer.model || this.#model(request),
      };
    } catch (error) {
      throw deadline.failure(error, 'language model provider');
    } finally {
      deadline.pause();
    }
  }

  async *stream(request: ChatRequest): AsyncGenerator<string, ChatCompletion, void> {
    const deadline = new Deadline(this.#timeoutMs, request.signal, this.#clock);
    let upstream: AbortController | undefined;
    let finished = false;
    try {
      const chunks = await this.#send(request, deadline, (body) =>
        this.#client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, { signal: deadline.signal, timeout: this.#timeoutMs }),
      );
      upstream = chunks.controller;
      let content = '';
      let model: string | undefined;
      let reported: unknown;
      let finishReason: string | undefined;
      const toolCalls = new ToolCallAssembly();
      for await (const raw of chunks) {
        deadline.restart(true);
        const chunk = parseAnswer(chunkAnswer, raw, 'chat completion chunk');
        model ||= chunk.model ?? undefined;
        if (chunk.usage !== undefined && chunk.usage !== null) reported = chunk.usage;
        const choice = chunk.choices[0];
        if (!choice) continue;
        finishReason ??= choice.finish_reason ?? undefined;
        for (const fragment of choice.delta?.tool_calls ?? []) toolCalls.add(fragment);
        const piece = choice.delta?.content ?? choice.delta?.refusal ?? '';
        if (piece.length === 0) continue;
        content += piece;
        // The stall clock measures the provider, not how long our consumer takes to pass it on.
        deadline.pause();
        yield piece;
        deadline.restart(true);
      }
      // The SDK ends an aborted stream without an error; only the deadline knows why it ended.
      if (deadline.interrupted) throw new MalformedAnswer('the stream was interrupted');
      // Without a finish reason the answer was cut off (a crashed server, a proxy time-out).
      if (finishReason === undefined) throw new MalformedAnswer('the stream ended before the answer was complete');
      const calls = toolCalls.calls();
      finished = true;
      return {
        content,
        toolCalls: calls,
        usage: providerUsage(reported) ?? usageOf(countPromptTokens(request.messages, request.tools), countTextTokens(content) + (calls.length === 0 ? 0 : countTextTokens(JSON.stringify(calls)))),
        model: model || this.#model(request),
      };
    } catch (error) {
      throw deadline.failure(error, 'language model provider');
    } finally {
      deadline.pause();
      // Also reached when our consumer stops early: the provider should stop generating too.
      if (!finished) upstream?.abort();
    }
  }

  #model(request: ChatRequest): string {
    return request.model || this.name;
  }

  /**
   * Sends the request's body; a server that refuses its `response_format` gets the same request
   * once more without it, and this instance sends that server none from then on. The caller
   * checks the answer's JSON anyway, so a model left unconstrained costs only some reliability.
   */
  async #send<T>(request: ChatRequest, deadline: Deadline, send: (body: ChatCompletionCreateParamsBase) => Promise<T>): Promise<T> {
    const responseFormat = this.#sendsResponseFormat ? request.responseFormat : undefined;
    try {
      return await send(this.#body(request, responseFormat));
    } catch (error) {
      if (responseFormat === undefined || !refusesResponseFormat(error)) throw error;
      this.#sendsResponseFormat = false;
      // The retry is a call of its own, with a whole time bound.
      deadline.restart();
      return await send(this.#body(request, undefined));
    }
  }

  #body(request: ChatRequest, responseFormat: ResponseFormat | undefined): ChatCompletionCreateParamsBase {
    const body: ChatCompletionCreateParamsBase = {
      model: this.#model(request),
      messages: request.messages.map(providerMessage),
    };
    if (request.tools !== undefined && request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
      body.tool_choice = request.toolChoice ?? 'auto';
    }
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.topP !== undefined) body.top_p = request.topP;
    if (request.maxTokens !== undefined) body[this.#maxTokensField] = request.maxTokens;
    if (responseFormat !== undefined) {
      body.response_format = { type: 'json_schema', json_schema: { name: responseFormat.name, schema: responseFormat.schema, strict: true } };
    }
    return body;
  }
}

/**
 * Whether a failure is a server without structured outputs refusing `response_format`: servers
 * answer 400 or 422 and name the field (or its `json_schema` type) somewhere in the body, in
 * `message`, `param` or a validator's `detail`. The SDK keeps the parsed body in `error` (its
 * `error` member when it has one) and a non-JSON body's text in `message`: both are read.
 */
function refusesResponseFormat(error: unknown): boolean {
  if (!(error instanceof APIError) || (error.status !== 400 && error.status !== 422)) return false;
  return /response_format|json_schema/i.test(`${error.message} ${JSON.stringify(error.error ?? null)}`);
}

/** A message in the provider's format: calls as `tool_calls`, results as `tool` messages. */
function providerMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  if (message.role === 'assistant' && message.toolCalls?.length) {
    return {
      role: 'assistant',
      content: message.content === '' ? null : message.content,
      tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
    };
  }
  return { role: message.role, content: message.content };
}
