import { Marked } from 'marked';
import { firstHeading, type DocumentBlock, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { htmlToBlocks, parseHtmlDocument } from './html-blocks.js';
import { decodeText } from './text-decoding.js';

/** GitHub's dialect (tables among it), in an instance of its own so no global option leaks in or out. */
const markdown = new Marked({ gfm: true });

/**
 * Markdown is read a segment of at least this many characters at a time. marked's tokens and the
 * DOM they render to take about 30 times the text: a 13 MiB file read whole needed over 1 GiB.
 */
const MARKDOWN_SEGMENT_CHARS = 262_144;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const TOP_HEADING = /^#{1,6}(?:[ \t]|$)/;
/** HTML blocks that run until a closing marker, blank lines and all (CommonMark's kinds 1 and 2). */
const RAW_HTML_OPENING = /^ {0,3}(?:<(pre|script|style|textarea)(?:[\s>]|$)|(<!--))/i;
const RAW_HTML_CLOSING: Readonly<Record<string, RegExp>> = { pre: /<\/pre>/i, script: /<\/script>/i, style: /<\/style>/i, textarea: /<\/textarea>/i, comment: /-->/ };
/** A link reference definition's first line: `[label]: destination`. */
const LINK_DEFINITION = /^ {0,3}\[(?:[^\]\\]|\\.)+\]:[ \t]*\S.*$/gm;

/**
 * The text in segments cut before a heading at the start of a line, outside fenced code and raw
 * HTML: such a heading ends whatever block, list or quote came before it, so each segment renders
 * as it would within the whole.
 */
export function markdownSegments(text: string, minChars: number): string[] {
  const segments: string[] = [];
  let start = 0;
  /** The line that ends the fenced code or raw HTML this line is in. */
  let runsUntil: RegExp | undefined;
  for (let offset = 0; offset < text.length; ) {
    const newline = text.indexOf('\n', offset);
    const end = newline === -1 ? text.length : newline + 1;
    const line = text.slice(offset, end).replace(/\r?\n$/, '');
    if (runsUntil !== undefined) {
      if (runsUntil.test(line)) runsUntil = undefined;
    } else if (offset - start >= minChars && TOP_HEADING.test(line)) {
      segments.push(text.slice(start, offset));
      start = offset;
    } else {
      runsUntil = runOpenedBy(line);
    }
    offset = end;
  }
  if (start < text.length) segments.push(text.slice(start));
  return segments;
}

/** The closing line's pattern when `line` opens fenced code or raw HTML that it does not also close. */
function runOpenedBy(line: string): RegExp | undefined {
  const fence = FENCE.exec(line)?.[1];
  if (fence !== undefined) return new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
  const opening = RAW_HTML_OPENING.exec(line);
  if (!opening) return undefined;
  const closing = RAW_HTML_CLOSING[opening[1]?.toLowerCase() ?? 'comment']!;
  return closing.test(line.slice(opening[0].length)) ? undefined : closing;
}

/**
 * Markdown rendered by marked, then walked as HTML: ATX and setext headings, lists, tables and
 * fenced code come out as blocks. A segment at a time, each with every link reference definition
 * of the document, so a reference resolves wherever its definition is.
 */
export function markdownBlocks(text: string, segmentChars = MARKDOWN_SEGMENT_CHARS): DocumentBlock[] {
  const segments = markdownSegments(text, segmentChars);
  const definitions = segments.length > 1 ? `\n\n${(text.match(LINK_DEFINITION) ?? []).join('\n')}\n` : '';
  return segments.flatMap((segment) => {
    const body = parseHtmlDocument(markdown.parse(segment + definitions, { async: false })).body;
    return body ? htmlToBlocks(body) : [];
  });
}

function parseMarkdown({ bytes }: ParseInput): ParsedContent {
  const blocks = markdownBlocks(decodeText(bytes));
  return { title: firstHeading(blocks, 1), pages: null, blocks };
}

export const MARKDOWN_FORMAT: FormatKind = {
  contentType: 'text/markdown',
  mimeTypes: ['text/markdown', 'text/x-markdown'],
  extensions: ['md', 'markdown', 'mdown', 'mkd'],
  encoding: 'text',
  parse: parseMarkdown,
};
