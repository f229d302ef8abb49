import { collapseSpace, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { decodeText } from './text-decoding.js';

/** Paragraphs are what blank lines separate; lines within one are joined (text is often wrapped by hand). */
function parsePlainText({ bytes }: ParseInput): ParsedContent {
  const blocks = decodeText(bytes)
    .split(/\r?\n[ \t]*\r?\n/)
    .map(collapseSpace)
    .filter((text) => text !== '')
    .map((text) => ({ kind: 'paragraph' as const, text, page: null }));
  return { title: null, pages: null, blocks };
}

export const TEXT_FORMAT: FormatKind = {
  contentType: 'text/plain',
  mimeTypes: ['text/plain'],
  extensions: ['txt', 'text', 'log'],
  encoding: 'text',
  parse: parsePlainText,
};
