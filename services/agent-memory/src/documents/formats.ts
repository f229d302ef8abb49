import { fileTypeFromBuffer } from 'file-type';
import { CSV_FORMAT } from './csv.js';
import { unsupportedDocument, type DocumentFormat, type FormatKind } from './document.js';
import { DOCX_FORMAT } from './docx.js';
import { HTML_FORMAT } from './html.js';
import { JSON_FORMAT } from './json.js';
import { MARKDOWN_FORMAT } from './markdown.js';
import { PDF_FORMAT } from './pdf.js';
import { TEXT_FORMAT } from './plain-text.js';
import { decodeText } from './text-decoding.js';

/** Every format the platform reads. Text formats are tried in this order when the upload does not say which it is. */
export const FORMATS: Readonly<Record<DocumentFormat, FormatKind>> = {
  pdf: PDF_FORMAT,
  docx: DOCX_FORMAT,
  json: JSON_FORMAT,
  html: HTML_FORMAT,
  markdown: MARKDOWN_FORMAT,
  csv: CSV_FORMAT,
  text: TEXT_FORMAT,
};

const FORMAT_NAMES = Object.keys(FORMATS) as DocumentFormat[];

/**
 * What file-type reports for each binary format. A DOCX is a zip archive and file-type names it
 * only when the archive's entries come in the usual order, so any zip is looked into.
 */
const SIGNATURES: Readonly<Record<string, DocumentFormat>> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/zip': 'docx',
};

/** How much of a text upload `recognise` looks at. Characters. */
const HEAD_CHARS = 1024;

/**
 * Which format an upload is, given what the client declared. The bytes decide: a signature
 * file-type knows (PDF, DOCX, or a type the platform cannot read), else text, which must decode.
 * What was declared (MIME type, then file name extension) must agree with the bytes, and picks
 * among the text formats; an upload that declares nothing the platform knows is taken for what
 * its bytes look like. Throws DomainError('unsupported_document') otherwise, and for an
 * encrypted PDF or a broken DOCX archive.
 */
export async function inspectDocument(input: { bytes: Uint8Array; contentType: string; filename: string }): Promise<{ format: DocumentFormat; contentType: string }> {
  const { bytes } = input;
  const declared = declaredFormats(input.contentType, input.filename);
  const signature = await fileTypeFromBuffer(bytes);
  // file-type also knows some text formats by their first line (XML, iCalendar…): those are read as text.
  if (signature && !isTextual(signature.mime)) {
    const format = SIGNATURES[signature.mime];
    if (format === undefined) throw unsupportedDocument(`The file is ${describe(signature)}, a type the platform cannot read.`);
    await FORMATS[format].verify?.(bytes);
    if (declared.length > 0 && !declared.includes(format)) throw unsupportedDocument(`The file was sent as ${declaredAs(declared)} but is a ${format.toUpperCase()}.`);
    return { format, contentType: FORMATS[format].contentType };
  }
  const declaredText = declared.filter((format) => FORMATS[format].encoding === 'text');
  if (declared.length > 0 && declaredText.length === 0) throw unsupportedDocument(`The file was sent as ${declaredAs(declared)} but is not one.`);
  const text = decodeText(bytes, { html: declared.length === 0 || declaredText.includes('html') });
  const head = text.slice(0, HEAD_CHARS);
  const format = declaredText[0] ?? FORMAT_NAMES.find((name) => FORMATS[name].recognise?.(head)) ?? 'text';
  return { format, contentType: FORMATS[format].contentType };
}

/**
 * The formats the MIME type and the file name claim, the MIME type's first. 'text' comes last:
 * clients send text/plain for any text (a .csv, a .md) they have no better name for. MIME types
 * and extensions the platform does not know claim nothing; the bytes then decide.
 */
function declaredFormats(contentType: string, filename: string): DocumentFormat[] {
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const extension = /\.([^./\\]+)$/.exec(filename.trim())?.[1]?.toLowerCase() ?? '';
  const byMime = FORMAT_NAMES.find((name) => FORMATS[name].mimeTypes.includes(mime));
  const byExtension = FORMAT_NAMES.find((name) => FORMATS[name].extensions.includes(extension));
  const claims = [...new Set([byMime, byExtension])].filter((format) => format !== undefined);
  return [...claims.filter((format) => format !== 'text'), ...claims.filter((format) => format === 'text')];
}

function isTextual(mime: string): boolean {
  return mime.startsWith('text/') || mime === 'application/xml';
}

function describe(signature: { ext: string; mime: string }): string {
  return `a ${signature.ext.toUpperCase()} file (${signature.mime})`;
}

function declaredAs(formats: readonly DocumentFormat[]): string {
  return formats.map((format) => (format === 'text' ? 'plain text' : format.toUpperCase())).join(' / ');
}
