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
 * How long the built-in embedders embed on this thread before they let other work run. All at
 * once, a 20 MiB text's 26,666 chunks held the event loop for ~5 s, past every caller's deadline.
 * Slices are measured in time, not texts, as texts' lengths differ: a search asked meanwhile waits
 * out a slice at each of its steps (in slices of 200 chunks, ~40 ms each here).
 */
export const EMBED_SLICE_MS = 8;

/** `embedOne` over the texts, yielding to the event loop whenever it has worked EMBED_SLICE_MS. */
export async function embedInSlices(texts: readonly string[], embedOne: (text: string) => Float32Array, signal: AbortSignal | undefined): Promise<Float32Array[]> {
  signal?.throwIfAborted();
  const vectors: Float32Array[] = [];
  let sliceStarted = performance.now();
  for (const text of texts) {
    if (performance.now() - sliceStarted >= EMBED_SLICE_MS) {
      await setImmediate();
      signal?.throwIfAborted();
      sliceStarted = performance.now();
    }
    vectors.push(embedOne(text));
  }
  return vectors;
}
