import type { StructuredTextItem } from 'unpdf';
import { CELL_SEPARATOR, collapseSpace, type DocumentBlock } from './document.js';

/** What the layout reads of a pdf.js text item: its text, baseline start, width and font size (PDF points). */
export type PdfTextItem = Pick<StructuredTextItem, 'str' | 'x' | 'y' | 'width' | 'fontSize'>;

/** The thresholds of the layout, in font sizes (em) unless said otherwise. */
const LAYOUT = {
  /** Items whose baselines differ by less than this are on one line. */
  sameLineEm: 0.5,
  /** A gap wider than this separates table cells; a word space is about 0.25. */
  cellGapEm: 1.5,
  /** A gap narrower than this joins two items with no space: one word split where its font changes. */
  wordGapEm: 0.1,
  /** A line at least this many times the body's font size is a heading. */
  headingRatio: 1.15,
  /** Headings are short; a longer line in a large font stays a paragraph. Characters. */
  maxHeadingChars: 200,
  /** A baseline step this many times the body's usual one (a blank line's worth) ends a paragraph. */
  paragraphStepRatio: 1.4,
  /** Lines split into cells are table rows only in a run of at least this many on one page. */
  minTableRows: 2,
} as const;

/** A line that starts a list item: a bullet, or a number or letter followed by '.' or ')'. */
const LIST_MARKER = /^(?:[•◦▪▫‣⁃●○■□–-]|\(?(?:\d{1,3}|[a-z])[.)])\s+/;

interface Line {
  page: number;
  /** Baseline, in PDF points from the bottom of the page. */
  y: number;
  /** The font size of most of the line's characters, rounded to half a point. */
  size: number;
  cells: string[];
}

interface Segment {
  text: string;
  x: number;
  end: number;
  size: number;
}

/**
 * The blocks of a PDF from its text items, page by page in content order. Lines are items on one
 * baseline; a line in a font larger than the body's (the characters' median size) is a heading,
 * levelled by its size's rank among heading sizes; runs of lines whose items stand apart in
 * columns are table rows; other lines join into paragraphs until a wider baseline step, and lines
 * that start with a bullet or number into list items.
 */
export function pdfBlocks(pages: readonly (readonly PdfTextItem[])[]): DocumentBlock[] {
  const lines = pages.flatMap((items, index) => pageLines(items, index + 1));
  const tableRows = tableLines(lines);
  const bodySize = medianSize(lines);
  const isHeading = (line: Line): boolean =>
    !tableRows.has(line) && line.size >= bodySize * LAYOUT.headingRatio && line.cells.join(' ').length <= LAYOUT.maxHeadingChars;
  const headingSizes = [...new Set(lines.filter(isHeading).map((line) => line.size))].sort((a, b) => b - a);
  const paragraphStep = usualStep(lines.filter((line) => line.size === bodySize)) * LAYOUT.paragraphStepRatio;

  const blocks: DocumentBlock[] = [];
  let open: { block: DocumentBlock; line: Line } | undefined;
  for (const line of lines) {
    const text = line.cells.join(' ');
    const follows = open !== undefined && open.line.page === line.page && open.line.y - line.y > 0;
    const step = open ? open.line.y - line.y : 0;
    if (tableRows.has(line)) {
      blocks.push({ kind: 'table_row', text: line.cells.join(CELL_SEPARATOR), page: line.page });
      open = undefined;
      continue;
    }
    if (isHeading(line)) {
      // A heading too long for one line goes on in the next line of the same size.
      if (follows && open?.block.kind === 'heading' && open.line.size === line.size && step <= line.size * 2) {
        open = { block: { ...open.block, text: joinLines(open.block.text, text) }, line };
        blocks[blocks.length - 1] = open.block;
      } else {
        const level = Math.min(6, headingSizes.indexOf(line.size) + 1);
        open = { block: { kind: 'heading', text, level, page: line.page }, line };
        blocks.push(open.block);
      }
      continue;
    }
    const marker = LIST_MARKER.exec(text);
    const continues = follows && open?.block.kind !== 'heading' && step <= paragraphStep;
    if (continues && !marker && open) {
      open = { block: { ...open.block, text: joinLines(open.block.text, text) }, line };
      blocks[blocks.length - 1] = open.block;
    } else {
      const block: DocumentBlock = marker ? { kind: 'list_item', text: text.slice(marker[0].length), page: line.page } : { kind: 'paragraph', text, page: line.page };
      open = { block, line };
      blocks.push(block);
    }
  }
  return blocks;
}

/** Lines in content order: an item starts a new line when its baseline moves or it goes back left. */
function pageLines(items: readonly PdfTextItem[], page: number): Line[] {
  const lines: Line[] = [];
  let segments: Segment[] = [];
  let baseline = 0;
  const close = (): void => {
    if (segments.length > 0) lines.push(toLine(segments, baseline, page));
    segments = [];
  };
  for (const item of items) {
    // pdf.js fills gaps with items of white space: the gaps themselves are measured instead.
    if (item.str.trim() === '' || item.fontSize <= 0) continue;
    const last = segments.at(-1);
    if (last && (Math.abs(item.y - baseline) > LAYOUT.sameLineEm * Math.max(item.fontSize, last.size) || item.x < last.x)) close();
    if (segments.length === 0) baseline = item.y;
    segments.push({ text: item.str, x: item.x, end: item.x + item.width, size: item.fontSize });
  }
  close();
  return lines;
}

function toLine(segments: readonly Segment[], y: number, page: number): Line {
  const cells: string[] = [];
  let cell = '';
  let previous: Segment | undefined;
  for (const segment of segments) {
    const gap = previous ? segment.x - previous.end : 0;
    if (previous && gap > LAYOUT.cellGapEm * segment.size) {
      cells.push(cell);
      cell = '';
    } else if (previous && gap > LAYOUT.wordGapEm * segment.size) {
      cell += ' ';
    }
    cell += segment.text;
    previous = segment;
  }
  cells.push(cell);
  const dominant = segments.reduce((most, segment) => (segment.text.length > most.text.length ? segment : most));
  return { page, y, size: Math.round(dominant.size * 2) / 2, cells: cells.map(collapseSpace).filter((text) => text !== '') };
}

/** Lines of two or more cells, in runs of at least minTableRows on one page. */
function tableLines(lines: readonly Line[]): Set<Line> {
  const rows = new Set<Line>();
  let run: Line[] = [];
  const end = (): void => {
    if (run.length >= LAYOUT.minTableRows) for (const line of run) rows.add(line);
    run = [];
  };
  for (const line of lines) {
    if (line.cells.length < 2 || run.at(-1)?.page !== line.page) end();
    if (line.cells.length >= 2) run.push(line);
  }
  end();
  return rows;
}

/** The font size of the median character: the body text's. */
function medianSize(lines: readonly Line[]): number {
  const bySize = lines.map((line) => ({ size: line.size, chars: line.cells.join('').length })).sort((a, b) => a.size - b.size);
  const half = bySize.reduce((sum, { chars }) => sum + chars, 0) / 2;
  let seen = 0;
  for (const { size, chars } of bySize) {
    seen += chars;
    if (seen >= half) return size;
  }
  return 0;
}

/** The median baseline step between consecutive lines of body text on a page (PDF points). */
function usualStep(lines: readonly Line[]): number {
  const steps: number[] = [];
  lines.forEach((line, index) => {
    const previous = lines[index - 1];
    const step = previous && previous.page === line.page ? previous.y - line.y : 0;
    // A step of several lines is a gap, not the line spacing.
    if (step > 0 && step < line.size * 3) steps.push(step);
  });
  steps.sort((a, b) => a - b);
  return steps[Math.floor(steps.length / 2)] ?? (lines[0]?.size ?? 12) * 1.2;
}

/** Lines of one paragraph joined; a line ending in a hyphen runs on into the next without a space. */
function joinLines(before: string, after: string): string {
  return before.endsWith('-') ? `${before}${after}` : `${before} ${after}`;
}
