import type { Clock } from '@agent-platform/kit';
import type OpenAI from 'openai';
import type { EmbeddingCreateParams } from 'openai/resources/embeddings';
import { z } from 'zod';
import { normalised, type Embedder } from './embedder.js';
import { DEFAULT_TIMEOUT_MS, openAIClient, parseAnswer, type OpenAICompatibleOptions } from './openai-client.js';
import { Deadline, MalformedAnswer } from './upstream.js';

export interface OpenAIEmbedderOptions extends OpenAICompatibleOptions {
  /** EMBEDDING_MODEL, e.g. text-embedding-3-small, nomic-embed-text. */
  model: string;
  /** The vector length the model produces (1536 for text-embedding-3-small, 768 for nomic…). */
  dimensions: number;
  /**
   * Ask the server for `dimensions` (OpenAI's text-embedding-3-* and some vLLM models can shorten
   * their vectors). Off by default: servers whose models cannot reject the field.
   */
  requestDimensions?: boolean;
  /** Texts per request; OpenAI takes up to 2,048, smaller servers prefer fewer. */
  batchSize?: number;
}

const DEFAULT_BATCH_SIZE = 128;

const embeddingAnswer = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative().nullish(), embedding: z.array(z.number()) })),
});

/** Any OpenAI-compatible embeddings server: OpenAI, Ollama, vLLM, llama.cpp, TEI… */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly #client: OpenAI;
  readonly #timeoutMs: number;
  readonly #clock: Clock | undefined;
  readonly #requestDimensions: boolean;
  readonly #batchSize: number;

  constructor(options: OpenAIEmbedderOptions) {
    if (!Number.isSafeInteger(options.dimensions) || options.dimensions < 1) {
      throw new RangeError(`dimensions must be a positive integer, not ${options.dimensions}`);
    }
    this.model = options.model;
    this.dimensions = options.dimensions;
    this.#client = openAIClient(options);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock;
    this.#requestDimensions = options.requestDimensions ?? false;
    this.#batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    // One batch at a time: a document's chunks should not take all of a provider's rate limit.
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      vectors.push(...(await this.#embedBatch(texts.slice(start, start + this.#batchSize), signal)));
    }
    return vectors;
  }

  async #embedBatch(texts: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const deadline = new Deadline(this.#timeoutMs, signal, this.#clock);
    try {
      // `float`, not the SDK's default base64: not every compatible server can encode base64.
      const body: EmbeddingCreateParams = { model: this.model, input: [...texts], encoding_format: 'float' };
      if (this.#requestDimensions) body.dimensions = this.dimensions;
      const raw: unknown = await this.#client.embeddings.create(body, { signal: deadline.signal, timeout: this.#timeoutMs });
      return this.#vectors(parseAnswer(embeddingAnswer, raw, 'embeddings'), texts.length);
    } catch (error) {
      throw deadline.failure(error, 'embedding provider');
    } finally {
      deadline.pause();
    }
  }

  #vectors(answer: z.infer<typeof embeddingAnswer>, expected: number): Float32Array[] {
    if (answer.data.length !== expected) {
      throw new MalformedAnswer(`embeddings: ${answer.data.length} vectors for ${expected} texts`);
    }
    // OpenAI answers in input order and says so with `index`; trust the index when every item has one.
    const indexed = answer.data.every((item) => typeof item.index === 'number');
    const vectors = new Array<Float32Array | undefined>(expected);
    answer.data.forEach((item, position) => {
      const slot = indexed ? (item.index ?? position) : position;
      if (slot >= expected || vectors[slot] !== undefined) {
        throw new MalformedAnswer(`embeddings: index ${slot} is out of range or repeated`);
      }
      if (item.embedding.length !== this.dimensions) {
        throw new MalformedAnswer(`embeddings: a vector of ${item.embedding.length} dimensions, expected ${this.dimensions}`);
      }
      const unit = normalised(item.embedding);
      if (!unit) throw new MalformedAnswer('embeddings: a vector that is all zero or not finite');
      vectors[slot] = unit;
    });
    return vectors.map((vector, slot) => {
      if (!vector) throw new MalformedAnswer(`embeddings: no vector for text ${slot}`);
      return vector;
    });
  }
}
