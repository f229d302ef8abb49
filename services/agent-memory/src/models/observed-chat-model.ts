import { context, metrics, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { ChatCompletion, ChatModel, ChatRequest } from './chat-model.js';

const tracer = trace.getTracer('@agent-platform/agent-memory');
const meter = metrics.getMeter('@agent-platform/agent-memory');

// The GenAI semantic conventions' client metrics, with their advised buckets.
const operationDuration = meter.createHistogram('gen_ai.client.operation.duration', {
  unit: 's',
  description: 'Duration of language model calls.',
  advice: { explicitBucketBoundaries: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] },
});
const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
  unit: '{token}',
  description: 'Tokens used by language model calls, by type (input, output).',
  advice: { explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576] },
});

export interface ModelProvider {
  /** `gen_ai.provider.name`: `openai` for any OpenAI-compatible server, `offline` for the built-in one. */
  name: string;
  /** The server's host, when the model is remote. */
  address?: string | undefined;
}

/**
 * A ChatModel whose every call is a `chat {model}` CLIENT span and is measured, per the GenAI
 * semantic conventions: model names, token usage and finish as span attributes, and the duration
 * and token histograms. No prompt or answer text is recorded: it is the tenant's data.
 */
export class ObservedChatModel implements ChatModel {
  constructor(
    private readonly model: ChatModel,
    private readonly provider: ModelProvider,
  ) {}

  get name(): string {
    return this.model.name;
  }

  async complete(request: ChatRequest): Promise<ChatCompletion> {
    const call = this.begin(request);
    try {
      const completion = await context.with(trace.setSpan(context.active(), call.span), () => this.model.complete(request));
      call.end(completion);
      return completion;
    } catch (error) {
      call.fail(error);
      throw error;
    }
  }

  async *stream(request: ChatRequest): AsyncGenerator<string, ChatCompletion, void> {
    const call = this.begin(request);
    const pieces = context.with(trace.setSpan(context.active(), call.span), () => this.model.stream(request));
    let completion: ChatCompletion | undefined;
    try {
      // Each step runs in the span's context, so the HTTP span of the upstream request is its child.
      for (;;) {
        const next = await context.with(trace.setSpan(context.active(), call.span), () => pieces.next());
        if (next.done) {
          completion = next.value;
          break;
        }
        yield next.value;
      }
      call.end(completion);
      return completion;
    } catch (error) {
      call.fail(error);
      throw error;
    } finally {
      // The caller left the loop early (the client went away): the call ends without an answer.
      if (!completion) call.fail(new Error('cancelled'));
    }
  }

  private begin(request: ChatRequest) {
    const requested = request.model ?? this.model.name;
    const common: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.provider.name,
      'gen_ai.request.model': requested,
      ...(this.provider.address ? { 'server.address': this.provider.address } : {}),
    };
    const span: Span = tracer.startSpan(`chat ${requested}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        ...common,
        ...(request.temperature === undefined ? {} : { 'gen_ai.request.temperature': request.temperature }),
        ...(request.maxTokens === undefined ? {} : { 'gen_ai.request.max_tokens': request.maxTokens }),
        ...(request.topP === undefined ? {} : { 'gen_ai.request.top_p': request.topP }),
      },
    });
    const started = performance.now();
    let ended = false;
    const seconds = () => (performance.now() - started) / 1000;
    return {
      span,
      end: (completion: ChatCompletion) => {
        if (ended) return;
        ended = true;
        const attributes = { ...common, 'gen_ai.response.model': completion.model };
        span.setAttributes({
          'gen_ai.response.model': completion.model,
          'gen_ai.usage.input_tokens': completion.usage.promptTokens,
          'gen_ai.usage.output_tokens': completion.usage.completionTokens,
        });
        span.end();
        operationDuration.record(seconds(), attributes);
        tokenUsage.record(completion.usage.promptTokens, { ...attributes, 'gen_ai.token.type': 'input' });
        tokenUsage.record(completion.usage.completionTokens, { ...attributes, 'gen_ai.token.type': 'output' });
      },
      fail: (error: unknown) => {
        if (ended) return;
        ended = true;
        const errorType = errorTypeOf(error);
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        operationDuration.record(seconds(), { ...common, 'error.type': errorType });
      },
    };
  }
}

function errorTypeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.name : '_OTHER';
}
