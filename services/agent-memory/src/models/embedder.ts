import { setImmediate } from 'node:timers/promises';

/**
 * The Embedder port: text in, unit-length vectors out, so that cosine similarity is a plain dot
 * product and scores from either vector index land in [-1, 1] the same way. Adapters:
 * `OpenAIEmbedder` (any OpenAI-compatible embeddings server), `HybridEmbedder` (built in, the
 * default offline) and `HashingEmbedder` (built in, lexical only).
 *
 * A provider failure (unreachable, HTTP error, time-out, an answer of the wrong count, dimension
 * or with non-finite numbers) rejects with `DomainError('upstream_error', …)`; an abort through
 * `signal` rejects with the signal's reason.
 */
export interface Embedder {
  /** Recorded beside stored vectors: vectors of different models must never be compared. */
  readonly model: string;
  readonly dimensions: number;
  /**
   * Models whose stored vectors this one replaces: items of them are re-embedded in the background
   * (memory/reembedding.ts) and found by their words meanwhile. None: items of other models are
   * left as they are, never compared, and so never found.
   */
  readonly supersedes?: readonly string[];
  /** One vector per text, in order, each of length `dimensions` and L2-normalised. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/**
 * `values` scaled to unit length, or undefined when there is no direction to keep (all zero, or
 * not finite). Sums in float64: float32 accumulation drifts on 3,072-wide vectors.
 */
export function normalised(values: ArrayLike<number>): Float32Array | undefined {
  let sumOfSquares = 0;
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index] ?? Number.NaN;
    if (!Number.isFinite(value)) return undefined;
    sumOfSquares += value * value;
  }
  const norm = Math.sqrt(sumOfSquares);
  if (norm === 0 || !Number.isFinite(norm)) return undefined;
  const unit = new Float32Array(values.length);
  for (let index = 0; index < values.length; index += 1) unit[index] = (values[index] ?? 0) / norm;
  return unit;
}

/** Cosine similarity of two unit vectors (their dot product); for tests and the embedded index. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError(`vectors of ${a.length} and ${b.length} dimensions`);
  let dot = 0;
  for (let index = 0; index < a.length; index += 1) dot += (a[index] ?? 0) * (b[index] ?? 0);
  return dot;
}

/**
 * Texts embedded on this thread at a time by the built-in embedders, between which other work
 * runs: ~200 a slice is ~40 ms at their ~5,000 a second. All at once, a 20 MiB text's 26,000
 * chunks held the event loop for ~5 s, past every caller's deadline.
 */
export const EMBED_SLICE = 200;

/** `embedOne` over the texts, a slice at a time, yielding to the event loop between slices. */
export async function embedInSlices(texts: readonly string[], embedOne: (text: string) => Float32Array, signal: AbortSignal | undefined): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += EMBED_SLICE) {
    if (start > 0) await setImmediate();
    signal?.throwIfAborted();
    for (let index = start; index < Math.min(texts.length, start + EMBED_SLICE); index += 1) vectors.push(embedOne(texts[index]!));
  }
  return vectors;
}
