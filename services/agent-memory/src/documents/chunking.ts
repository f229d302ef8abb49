export interface ChunkOptions {
  /** Longest chunk, in UTF-16 code units (what `String.length` counts). */
  maxChars?: number;
  /** How much of the previous chunk's end a chunk repeats, so a fact cut in two is whole in one. */
  overlapChars?: number;
}

export const DEFAULT_MAX_CHARS = 1000;
export const DEFAULT_OVERLAP_CHARS = 200;

/** A chunk as offsets into the text: `text.slice(start, end)`. */
export interface ChunkSpan {
  start: number;
  end: number;
}

/**
 * Boundaries to cut at, best first. Each finds, in a window, the offset where a chunk may end:
 * before a blank line, before a line break, after a sentence's end mark, before a space.
 */
const BOUNDARIES: readonly { pattern: RegExp; cutAfterMatch: boolean }[] = [
  { pattern: /\r?\n[ \t]*\r?\n/g, cutAfterMatch: false },
  { pattern: /\r?\n/g, cutAfterMatch: false },
  { pattern: /[.!?…。！？](?=[\s"'”’)\]]|$)/g, cutAfterMatch: true },
  { pattern: /\s/g, cutAfterMatch: false },
];

/**
 * Splits `text` into chunks of at most `maxChars`, cut at the best boundary in the back half of
 * each window (paragraph, line, sentence, word; a hard cut only in a run with no space, never
 * inside a surrogate pair). Each chunk after the first starts about `overlapChars` before the
 * previous one ended, at a word's start where there is one. Chunks are trimmed of surrounding
 * white space; every other character of the text is in at least one chunk, in order.
 * Empty or blank text gives no chunks.
 */
export function chunkText(text: string, options: ChunkOptions = {}): string[] {
  return chunkSpans(text, options).map((span) => text.slice(span.start, span.end));
}

/** The options with their defaults filled in; a RangeError for sizes no chunking can meet. */
export function resolveChunkOptions(options: ChunkOptions = {}): Required<ChunkOptions> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  const overlapChars = options.overlapChars ?? DEFAULT_OVERLAP_CHARS;
  if (!Number.isSafeInteger(maxChars) || maxChars < 2) throw new RangeError(`maxChars must be an integer of at least 2, not ${maxChars}`);
  if (!Number.isSafeInteger(overlapChars) || overlapChars < 0 || overlapChars >= maxChars) {
    throw new RangeError(`overlapChars must be an integer from 0 to maxChars - 1, not ${overlapChars}`);
  }
  return { maxChars, overlapChars };
}

export function chunkSpans(text: string, options: ChunkOptions = {}): ChunkSpan[] {
  const { maxChars, overlapChars } = resolveChunkOptions(options);

  const spans: ChunkSpan[] = [];
  const push = (span: ChunkSpan): void => {
    // A span inside the previous one (possible only with an overlap of nearly maxChars) adds nothing.
    if (span.end > span.start && span.end > (spans.at(-1)?.end ?? 0)) spans.push(span);
  };
  let start = skipSpace(text, 0);
  while (start < text.length) {
    if (text.length - start <= maxChars) {
      push(trimmed(text, start, text.length));
      break;
    }
    const windowEnd = safeCut(text, start + maxChars);
    // Cutting in the back half keeps chunks full; past the overlap keeps each step moving forward.
    const earliest = Math.min(windowEnd, start + Math.max(Math.ceil(maxChars / 2), overlapChars + 1));
    const end = bestCut(text, start, earliest, windowEnd);
    push(trimmed(text, start, end));
    // The overlap is measured back from where new text resumes, so a long run of white space
    // cannot make the next chunk a copy of this one's end; and it never reaches back past the
    // start of this chunk, so the next one cannot be this one again with more at the end.
    const resume = skipSpace(text, end);
    if (resume >= text.length) break;
    const floor = nextCodePoint(text, spans.at(-1)?.start ?? start);
    const next = overlapChars === 0 ? resume : overlapStart(text, Math.max(resume - overlapChars, floor), resume);
    start = next > start ? next : nextCodePoint(text, start);
  }
  return spans;
}

function bestCut(text: string, start: number, earliest: number, windowEnd: number): number {
  // One character past the window lets a sentence mark see what follows it.
  const window = text.slice(start, Math.min(text.length, windowEnd + 1));
  for (const { pattern, cutAfterMatch } of BOUNDARIES) {
    let best = -1;
    for (const match of window.matchAll(pattern)) {
      const cut = start + match.index + (cutAfterMatch ? match[0].length : 0);
      if (cut >= earliest && cut <= windowEnd) best = cut;
    }
    if (best !== -1) return best;
  }
  return windowEnd;
}

/** The first word start in [from, end); `from` itself (kept off a surrogate pair) when none. */
function overlapStart(text: string, from: number, end: number): number {
  for (let index = Math.max(1, from); index < end; index += 1) {
    if (isSpace(text.charCodeAt(index - 1)) && !isSpace(text.charCodeAt(index))) return index;
  }
  return safeCut(text, Math.max(0, from));
}

/** `offset`, or one before it when it would split a surrogate pair. */
function safeCut(text: string, offset: number): number {
  const code = text.charCodeAt(offset);
  const before = text.charCodeAt(offset - 1);
  const splitsPair = code >= 0xdc00 && code <= 0xdfff && before >= 0xd800 && before <= 0xdbff;
  return splitsPair ? offset - 1 : offset;
}

function nextCodePoint(text: string, offset: number): number {
  return (text.codePointAt(offset) ?? 0) > 0xffff ? offset + 2 : offset + 1;
}

function trimmed(text: string, start: number, end: number): ChunkSpan {
  let from = start;
  let to = end;
  while (from < to && isSpace(text.charCodeAt(from))) from += 1;
  while (to > from && isSpace(text.charCodeAt(to - 1))) to -= 1;
  return { start: from, end: to };
}

function skipSpace(text: string, offset: number): number {
  let index = offset;
  while (index < text.length && isSpace(text.charCodeAt(index))) index += 1;
  return index;
}

/** What `/\s/` matches, without a string and a regular expression per character for ASCII. */
function isSpace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return /\s/.test(String.fromCharCode(code));
}
