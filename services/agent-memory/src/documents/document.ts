import { DomainError } from '@agent-platform/kit';

export type DocumentFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'text' | 'csv' | 'json';

export interface DocumentBlock {
  kind: 'heading' | 'paragraph' | 'table_row' | 'list_item' | 'code';
  text: string;
  /** Headings only: 1–6. */
  level?: number;
  /** 1-based page for paginated formats (PDF); null otherwise. */
  page: number | null;
  /**
   * Table rows only, when the table has a header row: that row's text. A chunk that starts
   * inside the table repeats it, so its rows still say what their cells are.
   */
  tableHeader?: string;
}

export interface ParsedDocument {
  format: DocumentFormat;
  /** From the document (PDF metadata title, first h1, <title>, DOCX core title…), or null. */
  title: string | null;
  /** Page count for PDF, null for others. */
  pages: number | null;
  blocks: DocumentBlock[];
}

/** What every format's parser is given. */
export interface ParseInput {
  bytes: Uint8Array;
  /** Where an HTML page came from, when known. */
  url?: string;
}

/** Table cells are written into one line with this between them. */
export const CELL_SEPARATOR = ' | ';

export function unsupportedDocument(message: string, cause?: unknown): DomainError {
  return new DomainError('unsupported_document', message, cause === undefined ? {} : { cause });
}

/**
 * Runs of white space (line breaks included) that are not already one space. Matching every
 * space, as `/\s+/` does, replaced each word gap of a 20 MiB text with itself: 50 times slower.
 */
const SPACE_TO_COLLAPSE = /\s{2,}|[^\S ]/g;

/** Runs of white space (line breaks included) as one space, trimmed. */
export function collapseSpace(text: string): string {
  return text.replace(SPACE_TO_COLLAPSE, ' ').trim();
}

/** Code keeps its lines and indentation; only trailing spaces and blank lines around it go. */
export function tidyCode(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+|\n+$/g, '');
}

/** A block's text as chunks hold it: code keeps its lines, everything else is one line. */
export function normaliseBlockText(block: DocumentBlock): string {
  return block.kind === 'code' ? tidyCode(block.text) : collapseSpace(block.text);
}

/** The first heading's text, the title of documents that have no title of their own. */
export function firstHeading(blocks: readonly DocumentBlock[], level?: number): string | null {
  const heading = blocks.find((block) => block.kind === 'heading' && (level === undefined || block.level === level));
  return heading ? collapseSpace(heading.text) || null : null;
}

/**
 * One uploadable format: how an upload is recognised as it, and how it is read. The registry in
 * formats.ts holds one per DocumentFormat.
 */
export interface FormatKind {
  /** The canonical MIME type, stored with the document. */
  contentType: string;
  /** MIME types clients declare for it (the canonical one included). */
  mimeTypes: readonly string[];
  /** File name extensions, lower case, without the dot. */
  extensions: readonly string[];
  /** 'binary': recognised by its signature; 'text': readable text, told apart by what was declared. */
  encoding: 'binary' | 'text';
  /** Text formats: whether undeclared text looks like this format (checked on its first characters). */
  recognise?: (head: string) => boolean;
  /** Upload-time checks beyond the signature, cheap enough to run within the request. */
  verify?: (bytes: Uint8Array) => void | Promise<void>;
  parse: (input: ParseInput) => ParsedContent | Promise<ParsedContent>;
}

/** A parser's result; parseDocument adds the format. */
export type ParsedContent = Omit<ParsedDocument, 'format'>;
