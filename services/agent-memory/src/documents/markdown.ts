import { Marked } from 'marked';
import { firstHeading, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { htmlToBlocks, parseHtmlDocument } from './html-blocks.js';
import { decodeText } from './text-decoding.js';

/** GitHub's dialect (tables among it), in an instance of its own so no global option leaks in or out. */
const markdown = new Marked({ gfm: true });

/** Markdown rendered by marked, then walked as HTML: ATX and setext headings, lists, tables and fenced code come out as blocks. */
function parseMarkdown({ bytes }: ParseInput): ParsedContent {
  const body = parseHtmlDocument(markdown.parse(decodeText(bytes), { async: false })).body;
  const blocks = body ? htmlToBlocks(body) : [];
  return { title: firstHeading(blocks, 1), pages: null, blocks };
}

export const MARKDOWN_FORMAT: FormatKind = {
  contentType: 'text/markdown',
  mimeTypes: ['text/markdown', 'text/x-markdown'],
  extensions: ['md', 'markdown', 'mdown', 'mkd'],
  encoding: 'text',
  parse: parseMarkdown,
};
