import { unsupportedDocument } from './document.js';

/** A byte order mark names the encoding outright; TextDecoder then drops the mark itself. */
const BYTE_ORDER_MARKS: readonly { mark: readonly number[]; encoding: string }[] = [
  { mark: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { mark: [0xff, 0xfe], encoding: 'utf-16le' },
  { mark: [0xfe, 0xff], encoding: 'utf-16be' },
];

/** Binary sniffing looks at the start only, as git and file(1) do: a binary shows itself early. */
const SNIFF_CHARS = 65_536;
/** Control codes text may hold: tab, line feed, vertical tab, form feed, carriage return, escape. */
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1b]);
/** HTML declares its encoding in its first 1,024 bytes (the HTML standard's prescan window). */
const HTML_PRESCAN_BYTES = 1024;
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i;

/**
 * The text of a text-format upload. Without a byte order mark it must be valid UTF-8, except an
 * HTML page that names another encoding in a <meta> tag (pages fetched by URL often do).
 * Throws unsupported_document for bytes that are not text.
 */
export function decodeText(bytes: Uint8Array, options: { html?: boolean } = {}): string {
  const encoding = byteOrderMark(bytes) ?? (options.html ? declaredHtmlEncoding(bytes) : undefined) ?? 'utf-8';
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch (error) {
    throw unsupportedDocument(`The file is not valid ${encoding.toUpperCase()} text.`, error);
  }
  if (looksBinary(text.slice(0, SNIFF_CHARS))) throw unsupportedDocument('The file holds binary data, not text.');
  return text;
}

/** A NUL, or control codes in more than 1 % of the characters. */
function looksBinary(head: string): boolean {
  let controls = 0;
  for (let index = 0; index < head.length; index += 1) {
    const code = head.charCodeAt(index);
    if (code === 0) return true;
    if ((code < 0x20 && !TEXT_CONTROLS.has(code)) || code === 0x7f) controls += 1;
  }
  return controls > head.length / 100;
}

function byteOrderMark(bytes: Uint8Array): string | undefined {
  return BYTE_ORDER_MARKS.find(({ mark }) => mark.every((byte, index) => bytes[index] === byte))?.encoding;
}

function declaredHtmlEncoding(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, HTML_PRESCAN_BYTES));
  const label = META_CHARSET.exec(head)?.[1];
  if (label === undefined) return undefined;
  try {
    return new TextDecoder(label).encoding;
  } catch {
    // A label TextDecoder does not know: read the page as UTF-8.
    return undefined;
  }
}
