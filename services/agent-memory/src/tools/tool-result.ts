/** decisions §12: what one call gives back to the model is at most this many bytes of JSON (64 KiB). */
export const RESULT_MAX_BYTES = 65_536;

/**
 * A result too large to give back whole: its beginning as text, flagged, so neither the model nor
 * a reader of the stored call takes a part for the whole.
 */
export interface CutResult {
  truncated: true;
  text: string;
}

/**
 * The result as it is when its JSON is at most `maxBytes` (RESULT_MAX_BYTES unless given); else a
 * CutResult of its beginning: a string's own text, any other value's JSON text. `undefined` reads
 * as null.
 */
export function fitResult(result: unknown, maxBytes = RESULT_MAX_BYTES): unknown {
  const value = result ?? null;
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json) <= maxBytes) return value;
  return cutText(typeof value === 'string' ? value : json, maxBytes);
}

/**
 * The longest beginning of `text` whose CutResult's JSON fits in `maxBytes`. Escaping makes the
 * JSON longer than the text by an amount that depends on the text (a quote takes two bytes, a
 * control character six), so the length is found by bisection: a longer beginning never has
 * shorter JSON. About 17 rounds over at most 64 KiB.
 */
export function cutText(text: string, maxBytes = RESULT_MAX_BYTES): CutResult {
  const bytes = Buffer.from(text, 'utf8');
  const fits = (count: number) => Buffer.byteLength(JSON.stringify({ truncated: true, text: headOf(bytes, count) })) <= maxBytes;
  let low = 0; // fits
  let high = Math.min(bytes.length, maxBytes) + 1; // does not fit, or is past the end
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return { truncated: true, text: headOf(bytes, low) };
}

/** The first `bytes` bytes as text; a character cut in two at the end is left out, not garbled. */
function headOf(bytes: Buffer, count: number): string {
  return new TextDecoder('utf-8').decode(bytes.subarray(0, count), { stream: true });
}
