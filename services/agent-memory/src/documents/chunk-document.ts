import { chunkSpans, resolveChunkOptions, type ChunkOptions } from './chunking.js';
import { normaliseBlockText, type DocumentBlock, type ParsedDocument } from './document.js';

export interface DocumentChunk {
  /** The chunk's own text (what is shown and quoted). */
  text: string;
  /** Heading path, outermost first, e.g. ['Returns', 'Refund window']; [] before any heading. */
  heading: string[];
  /** Page of the chunk's first block, or null. */
  page: number | null;
  /** 0-based order in the document. */
  position: number;
}

/** Blocks of a chunk are written one per line. */
const BLOCK_SEPARATOR = '\n';

interface Piece {
  text: string;
  kind: DocumentBlock['kind'];
  page: number | null;
  tableHeader?: string;
  /** A table's header row written again at the head of a chunk that starts inside the table. */
  repeatedHeader?: boolean;
}

/**
 * Cuts a parsed document into chunks of at most `maxChars` (default 1000), each under the heading
 * path its blocks stand under.
 *
 * - A heading ends the chunk before it and sets the path (a level-n heading replaces levels n and
 *   deeper). Headings are the path, not the text: a chunk's text is the blocks under them.
 * - Blocks are added whole while they fit. A table row is never cut: a row longer than `maxChars`
 *   is a chunk of its own, the one kind of chunk that may be longer. A longer paragraph, list item
 *   or code block is cut by chunkSpans, whose pieces overlap one another.
 * - A chunk starts with the end of the one before (up to `overlapChars`, default 200): whole
 *   blocks where they fit, else the end of the last block from a word start (never part of a
 *   row). The overlap never crosses a heading. A chunk that starts inside a table with a header
 *   row starts with that row.
 * - `page` is the page of the chunk's first block that is not overlap.
 * Blocks are normalised (white space collapsed, code keeps its lines); empty ones are dropped.
 */
export function chunkDocument(parsed: ParsedDocument, options: ChunkOptions = {}): DocumentChunk[] {
  const { maxChars, overlapChars } = resolveChunkOptions(options);
  const chunks: DocumentChunk[] = [];
  let path: { level: number; text: string }[] = [];
  /** The chunk before, when the next one is to overlap it (not across a heading). */
  let previous: Piece[] = [];
  /** What this chunk carries over: the overlap, and a repeated table header. */
  let context: Piece[] = [];
  /** This chunk's own blocks. */
  let fresh: Piece[] = [];

  const flush = (carry: boolean): void => {
    const first = fresh[0];
    if (first === undefined) return;
    const pieces = [...context, ...fresh];
    chunks.push({ text: joined(pieces), heading: path.map((entry) => entry.text), page: first.page, position: chunks.length });
    previous = carry ? pieces : [];
    context = [];
    fresh = [];
  };

  /** Opens a chunk with `piece`, after as much of the chunk before as the room left allows. */
  const start = (piece: Piece): void => {
    const header: Piece[] = piece.tableHeader === undefined ? [] : [{ text: piece.tableHeader, kind: 'table_row', page: piece.page, repeatedHeader: true }];
    // The overlap gives way to the header, the header to the row.
    if (!fits([...header, piece], maxChars)) header.length = 0;
    const room = maxChars - joined([...header, piece]).length - BLOCK_SEPARATOR.length;
    const overlap = overlapTail(previous, Math.min(overlapChars, room));
    const repeated = header.filter((row) => !overlap.some((carried) => carried.text === row.text));
    context = [...repeated, ...overlap];
    fresh = [piece];
  };

  const add = (piece: Piece): void => {
    if (fresh.length > 0 && fits([...context, ...fresh, piece], maxChars)) {
      fresh.push(piece);
      return;
    }
    if (piece.kind === 'table_row' || piece.text.length <= maxChars) {
      flush(true);
      start(piece);
      return;
    }
    addLong(piece);
  };

  /**
   * A block too long for any chunk, cut by chunkSpans: its first piece fills the room left in
   * this chunk (or opens the next, after the overlap); each later piece is a chunk of its own,
   * overlapping the piece before.
   */
  const addLong = (piece: Piece): void => {
    // Too little room would make a first piece of a few words.
    const enough = Math.max(overlapChars + 1, maxChars / 4);
    let room = fresh.length > 0 ? maxChars - joined([...context, ...fresh]).length - BLOCK_SEPARATOR.length : 0;
    if (room < enough) {
      flush(true);
      context = overlapTail(previous, overlapChars);
      room = maxChars - (context.length > 0 ? joined(context).length + BLOCK_SEPARATOR.length : 0);
      if (room < enough) {
        context = [];
        room = maxChars;
      }
    }
    cutLong(piece.text, room, { maxChars, overlapChars }).forEach((text, index) => {
      if (index > 0) flush(false);
      fresh.push({ ...piece, text });
    });
  };

  for (const block of parsed.blocks) {
    const text = normaliseBlockText(block);
    if (text === '') continue;
    if (block.kind === 'heading') {
      flush(false);
      const level = block.level ?? 1;
      path = [...path.filter((entry) => entry.level < level), { level, text }];
      continue;
    }
    const header = block.tableHeader === undefined ? '' : normaliseBlockText({ ...block, text: block.tableHeader });
    add({ text, kind: block.kind, page: block.page, ...(header === '' || header === text ? {} : { tableHeader: header }) });
  }
  flush(false);
  return chunks;
}

function joined(pieces: readonly Piece[]): string {
  return pieces.map((piece) => piece.text).join(BLOCK_SEPARATOR);
}

function fits(pieces: readonly Piece[], maxChars: number): boolean {
  return joined(pieces).length <= maxChars;
}

/**
 * The end of a chunk to start the next one with: as many whole blocks from its end as fit in
 * `overlapChars`; when not even the last one fits, the end of that block from a word start,
 * unless it is a table row, which is never cut.
 */
function overlapTail(pieces: readonly Piece[], overlapChars: number): Piece[] {
  const tail: Piece[] = [];
  if (overlapChars <= 0) return tail;
  for (const piece of [...pieces].reverse()) {
    if (piece.repeatedHeader || !fits([piece, ...tail], overlapChars)) break;
    tail.unshift(piece);
  }
  const last = pieces.at(-1);
  if (tail.length > 0 || last === undefined || last.kind === 'table_row') return tail;
  const text = wordTail(last.text, overlapChars);
  return text === '' ? [] : [{ ...last, text }];
}

/** `text` in pieces: the first at most `firstMax` long, the others `maxChars`, each overlapping the one before. */
function cutLong(text: string, firstMax: number, { maxChars, overlapChars }: Required<ChunkOptions>): string[] {
  const [first] = chunkSpans(text, { maxChars: firstMax, overlapChars: Math.min(overlapChars, firstMax - 1) });
  if (first === undefined) return [];
  const head = text.slice(first.start, first.end);
  if (text.slice(first.end).trim() === '') return [head];
  // The rest starts with the end of the first piece, from a word start, as chunkSpans overlaps its own.
  const resume = first.end - wordTail(head, overlapChars).length;
  return [head, ...chunkSpans(text.slice(resume), { maxChars, overlapChars }).map((span) => text.slice(resume + span.start, resume + span.end))];
}

/** The last `length` characters or fewer of `text`, from the first word start among them. */
function wordTail(text: string, length: number): string {
  if (text.length <= length) return text;
  const from = text.length - length;
  const space = text.slice(from).search(/\s\S/);
  return space === -1 ? '' : text.slice(from + space + 1).trim();
}
