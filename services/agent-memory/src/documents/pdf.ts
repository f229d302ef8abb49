import { extractTextItems, getDocumentProxy } from 'unpdf';
import { collapseSpace, firstHeading, unsupportedDocument, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { pdfBlocks } from './pdf-layout.js';

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/** The document-information entries read here (pdf.js types the dictionary as a bare Object). */
interface PdfInfo {
  Title?: unknown;
  /** The security handler's name ('Standard'…), null when the file is not encrypted. */
  EncryptFilterName?: unknown;
}

/** pdf.js logs warnings about damaged files to the console; failures reach us as errors anyway. */
const ERRORS_ONLY = 0;

/**
 * Opens a PDF with pdf.js (unpdf's build for servers: it runs in this thread, no worker needed).
 * Any encrypted PDF is refused, even one whose user password is empty and opens without asking:
 * the contract treats encryption as a file the platform does not read.
 */
async function openPdf(bytes: Uint8Array): Promise<{ pdf: PdfDocument; info: PdfInfo }> {
  let pdf: PdfDocument;
  try {
    // A plain Uint8Array copy: pdf.js refuses a Buffer, and may take over (detach) what it is handed.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: ERRORS_ONLY });
  } catch (error) {
    const encrypted = error instanceof Error && error.name === 'PasswordException';
    throw unsupportedDocument(encrypted ? 'The PDF is encrypted (password-protected).' : 'The file is not a readable PDF.', error);
  }
  const info = (await pdf.getMetadata()).info as PdfInfo;
  if (info.EncryptFilterName) {
    await pdf.loadingTask.destroy();
    throw unsupportedDocument('The PDF is encrypted (it has an encryption dictionary).');
  }
  return { pdf, info };
}

async function verifyPdf(bytes: Uint8Array): Promise<void> {
  const { pdf } = await openPdf(bytes);
  await pdf.loadingTask.destroy();
}

async function parsePdf({ bytes }: ParseInput): Promise<ParsedContent> {
  const { pdf, info } = await openPdf(bytes);
  try {
    const { totalPages, items } = await extractTextItems(pdf);
    const blocks = pdfBlocks(items);
    const title = (typeof info.Title === 'string' && collapseSpace(info.Title)) || firstHeading(blocks, 1);
    return { title, pages: totalPages, blocks };
  } catch (error) {
    throw unsupportedDocument('The PDF could not be read.', error);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

export const PDF_FORMAT: FormatKind = {
  contentType: 'application/pdf',
  mimeTypes: ['application/pdf', 'application/x-pdf'],
  extensions: ['pdf'],
  encoding: 'binary',
  verify: verifyPdf,
  parse: parsePdf,
};
