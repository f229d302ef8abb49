import { unzipSync } from 'fflate';
import { DOMParser } from 'linkedom';
import mammoth from 'mammoth';
import { collapseSpace, firstHeading, unsupportedDocument, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { htmlToBlocks, parseHtmlDocument } from './html-blocks.js';

const MAIN_PART = 'word/document.xml';
const CORE_PROPERTIES = 'docProps/core.xml';

/**
 * The archive's file names, and the contents of those `read` names. fflate reads the central
 * directory first, so a truncated or corrupt archive fails here at once, without inflating anything
 * but what is asked for.
 */
function readArchive(bytes: Uint8Array, read: readonly string[] = []): { names: string[]; files: Record<string, Uint8Array> } {
  const names: string[] = [];
  try {
    const files = unzipSync(bytes, {
      filter: (file) => {
        names.push(file.name);
        return read.includes(file.name);
      },
    });
    return { names, files };
  } catch (error) {
    throw unsupportedDocument('The DOCX file is a broken archive.', error);
  }
}

function verifyDocx(bytes: Uint8Array): void {
  if (!readArchive(bytes).names.includes(MAIN_PART)) throw unsupportedDocument('The archive is not a Word document: it has no word/document.xml.');
}

/** mammoth turns Word's structure (heading styles, lists, tables) into HTML, which is then walked as any page is. */
async function parseDocx({ bytes }: ParseInput): Promise<ParsedContent> {
  const { names, files } = readArchive(bytes, [CORE_PROPERTIES]);
  if (!names.includes(MAIN_PART)) throw unsupportedDocument('The archive is not a Word document: it has no word/document.xml.');
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value;
  } catch (error) {
    throw unsupportedDocument('The DOCX file could not be read.', error);
  }
  const body = parseHtmlDocument(html).body;
  const blocks = body ? htmlToBlocks(body) : [];
  const core = files[CORE_PROPERTIES];
  return { title: (core && coreTitle(core)) ?? firstHeading(blocks, 1) ?? firstHeading(blocks), pages: null, blocks };
}

interface XmlDocument {
  getElementsByTagName(name: string): ArrayLike<{ textContent: string | null }>;
}

/** dc:title of the core properties (File › Properties › Title in Word), when set. */
function coreTitle(xml: Uint8Array): string | null {
  const document = new DOMParser().parseFromString(new TextDecoder().decode(xml), 'text/xml') as unknown as XmlDocument;
  return collapseSpace(document.getElementsByTagName('dc:title')[0]?.textContent ?? '') || null;
}

export const DOCX_FORMAT: FormatKind = {
  contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  mimeTypes: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  extensions: ['docx'],
  encoding: 'binary',
  verify: verifyDocx,
  parse: parseDocx,
};
