import { DomainError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import {
  brokenDocx,
  encryptedPdf,
  htmlPageWithChrome,
  multiPagePdf,
  ownerOnlyEncryptedPdf,
  plainZip,
  pngBytes,
  randomBinary,
  sampleCsv,
  sampleDocx,
  sampleMarkdown,
} from '../../test/fixtures/documents.js';
import { inspectDocument, type DocumentFormat } from './parsing.js';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const windowsExe = (): Buffer => Buffer.concat([Buffer.from('MZ'), Buffer.alloc(510)]);

interface Case {
  name: string;
  bytes: () => Uint8Array | Promise<Uint8Array>;
  contentType: string;
  filename: string;
  /** The format it is taken for, or the words the refusal must contain. */
  expected: DocumentFormat | { refused: RegExp };
}

const CASES: Case[] = [
  { name: 'a PDF declared as one', bytes: () => multiPagePdf({ pages: 1 }), contentType: 'application/pdf', filename: 'handbook.pdf', expected: 'pdf' },
  { name: 'a PDF with nothing declared', bytes: () => multiPagePdf({ pages: 1 }), contentType: '', filename: '', expected: 'pdf' },
  { name: 'a PDF as octet-stream, named .PDF', bytes: () => multiPagePdf({ pages: 1 }), contentType: 'application/octet-stream', filename: 'HANDBOOK.PDF', expected: 'pdf' },
  { name: 'a DOCX declared as one', bytes: sampleDocx, contentType: DOCX_TYPE, filename: 'policy.docx', expected: 'docx' },
  { name: 'a DOCX as octet-stream', bytes: sampleDocx, contentType: 'application/octet-stream', filename: 'policy.docx', expected: 'docx' },
  { name: 'HTML with a charset parameter', bytes: () => text(htmlPageWithChrome()), contentType: 'text/html; charset=utf-8', filename: '', expected: 'html' },
  { name: 'HTML with nothing declared', bytes: () => text(htmlPageWithChrome()), contentType: '', filename: '', expected: 'html' },
  { name: 'Markdown declared as one', bytes: () => text(sampleMarkdown()), contentType: 'text/markdown', filename: '', expected: 'markdown' },
  { name: 'Markdown sent as text/plain, named .md', bytes: () => text(sampleMarkdown()), contentType: 'text/plain', filename: 'README.md', expected: 'markdown' },
  { name: 'CSV declared as one', bytes: () => text(sampleCsv()), contentType: 'text/csv', filename: 'export.csv', expected: 'csv' },
  { name: 'CSV as Windows labels it', bytes: () => text(sampleCsv()), contentType: 'application/vnd.ms-excel', filename: 'export.csv', expected: 'csv' },
  { name: 'JSON declared as one', bytes: () => text('{"a": 1}'), contentType: 'application/json', filename: '', expected: 'json' },
  { name: 'JSON with nothing declared', bytes: () => text('[{"a": 1}]'), contentType: 'application/octet-stream', filename: 'data', expected: 'json' },
  { name: 'plain text', bytes: () => text('Notes from the call.\n'), contentType: 'text/plain', filename: 'notes.txt', expected: 'text' },
  { name: 'text with nothing declared', bytes: () => text('Notes from the call.\n'), contentType: '', filename: '', expected: 'text' },
  { name: 'UTF-16 text with its byte order mark', bytes: () => Buffer.from('\uFEFFNotes.', 'utf16le'), contentType: 'text/plain', filename: '', expected: 'text' },

  { name: 'an image', bytes: pngBytes, contentType: 'image/png', filename: 'photo.png', expected: { refused: /PNG/ } },
  { name: 'a PNG named .pdf', bytes: pngBytes, contentType: 'application/pdf', filename: 'notes.pdf', expected: { refused: /PNG/ } },
  { name: 'a PNG sent as text/plain', bytes: pngBytes, contentType: 'text/plain', filename: 'notes.txt', expected: { refused: /PNG/ } },
  { name: 'a program', bytes: windowsExe, contentType: 'application/octet-stream', filename: 'setup.exe', expected: { refused: /cannot read/ } },
  { name: 'binary bytes declared as text', bytes: () => randomBinary(), contentType: 'text/plain', filename: 'notes.txt', expected: { refused: /text/ } },
  { name: 'invalid UTF-8 declared as CSV', bytes: () => Buffer.from('name\nJos\xe9\n', 'latin1'), contentType: 'text/csv', filename: '', expected: { refused: /UTF-8/ } },
  { name: 'text holding NUL bytes', bytes: () => text('abc\0def'), contentType: 'text/plain', filename: '', expected: { refused: /binary/ } },
  { name: 'a password-protected PDF', bytes: encryptedPdf, contentType: 'application/pdf', filename: 'secret.pdf', expected: { refused: /encrypted/ } },
  { name: 'a PDF encrypted with an empty user password', bytes: ownerOnlyEncryptedPdf, contentType: 'application/pdf', filename: '', expected: { refused: /encrypted/ } },
  { name: 'a truncated DOCX', bytes: brokenDocx, contentType: DOCX_TYPE, filename: 'policy.docx', expected: { refused: /broken archive/ } },
  { name: 'a zip that is not a DOCX', bytes: plainZip, contentType: 'application/zip', filename: 'notes.zip', expected: { refused: /not a Word document/ } },
  { name: 'a zip named .docx', bytes: plainZip, contentType: DOCX_TYPE, filename: 'policy.docx', expected: { refused: /not a Word document/ } },
  { name: 'a PDF sent as plain text', bytes: () => multiPagePdf({ pages: 1 }), contentType: 'text/plain', filename: 'notes.txt', expected: { refused: /plain text but is a PDF/ } },
  { name: 'a DOCX named .pdf', bytes: sampleDocx, contentType: 'application/pdf', filename: 'notes.pdf', expected: { refused: /sent as PDF but is a DOCX/ } },
  { name: 'text declared as a PDF', bytes: () => text('%not really a pdf'), contentType: 'application/pdf', filename: 'report.pdf', expected: { refused: /sent as PDF but is not one/ } },
];

describe('inspectDocument', () => {
  it.each(CASES)('$name', async ({ bytes, contentType, filename, expected }) => {
    const inspected = inspectDocument({ bytes: await bytes(), contentType, filename });
    if (typeof expected === 'string') {
      const { format, contentType: stored } = await inspected;
      expect(format).toBe(expected);
      expect(stored).toBe(CANONICAL_TYPES[expected]);
    } else {
      const error = await inspected.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'unsupported_document', message: expect.stringMatching(expected.refused) });
    }
  });
});

const CANONICAL_TYPES: Record<DocumentFormat, string> = {
  pdf: 'application/pdf',
  docx: DOCX_TYPE,
  html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
};
