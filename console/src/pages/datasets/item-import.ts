import type { RequestBody } from '@agent-platform/client';

/**
 * Dataset items pasted or uploaded as CSV or JSONL, read in the browser so that each line's
 * mistake is shown before anything is sent. Only the shape is checked here (a message to send,
 * fields of the right kind); the limits (lengths, end user ids) are the API's, whose refusal
 * names each item by position and is shown on its line too.
 */

export type NewItem = NonNullable<RequestBody<'/api/v1/datasets/{dataset_id}/items', 'post'>['items']>[number];
export type ImportFormat = 'csv' | 'jsonl';

export const CSV_COLUMNS = ['message', 'expected', 'user_id'] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];

/** One record of the text: the line it starts on, its text, and the item it makes or why it makes none. */
export interface Entry {
  line: number;
  raw: string;
  item?: NewItem;
  error?: string;
}

export interface ParsedImport {
  /** A CSV's header record, kept to write the text back (`remainingText`). */
  header?: string;
  /** What is wrong with the text as a whole (a CSV's header); then no entry is read. */
  problem?: { line: number; message: string };
  entries: Entry[];
}

export function parseImport(text: string, format: ImportFormat): ParsedImport {
  return format === 'csv' ? parseCsv(text) : parseJsonl(text);
}

/** The format a file's name says, if it says one. */
export function formatOfFile(name: string): ImportFormat | undefined {
  if (/\.csv$/i.test(name)) return 'csv';
  if (/\.(jsonl|ndjson)$/i.test(name)) return 'jsonl';
  return undefined;
}

/** The text again without its first `sent` entries (stored by now): the header, then what is left. */
export function remainingText(parsed: ParsedImport, sent: number): string {
  return [...(parsed.header === undefined ? [] : [parsed.header]), ...parsed.entries.slice(sent).map((entry) => entry.raw)].join('\n');
}

/** The 1 MiB body limit, less room for the `{"items":[…]}` around them. */
const BATCH_BYTES = 1_000_000;
export const BATCH_ITEMS = 1_000;

/** Items in the batches the API takes: at most 1,000 each, and within its body limit. */
export function batches(items: readonly NewItem[]): NewItem[][] {
  const encoder = new TextEncoder();
  const result: NewItem[][] = [];
  let current: NewItem[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = encoder.encode(JSON.stringify(item)).length + 1;
    if (current.length === BATCH_ITEMS || (current.length > 0 && bytes + size > BATCH_BYTES)) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** RFC 4180 records: quoted fields may hold commas, line breaks and doubled quotes; CRLF or LF ends a record. */
function csvRecords(text: string): { records: { line: number; raw: string; fields: string[] }[]; unclosed?: { line: number; raw: string } } {
  const records: { line: number; raw: string; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 0;
  let startLine = 1;
  const end = (at: number) => {
    fields.push(field);
    records.push({ line: startLine, raw: text.slice(start, at).replace(/\r$/, ''), fields });
    fields = [];
    field = '';
  };
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else {
        if (char === '\n') line += 1;
        field += char;
      }
    } else if (char === '"' && field === '') quoted = true;
    else if (char === ',') {
      fields.push(field);
      field = '';
    } else if (char === '\n') {
      end(index);
      line += 1;
      start = index + 1;
      startLine = line;
    } else if (!(char === '\r' && text[index + 1] === '\n')) field += char;
  }
  if (quoted) return { records, unclosed: { line: startLine, raw: text.slice(start) } };
  if (start < text.length) end(text.length);
  return { records };
}

function parseCsv(text: string): ParsedImport {
  const { records, unclosed } = csvRecords(text);
  const nonBlank = records.filter((record) => record.fields.length > 1 || record.fields[0]!.trim() !== '');
  const [header, ...rows] = nonBlank;
  if (!header) return { entries: unclosed ? [{ line: unclosed.line, raw: unclosed.raw, error: 'a quoted field is not closed' }] : [] };
  const columns = header.fields.map((name) => name.trim().toLowerCase());
  const unknown = columns.filter((name) => !CSV_COLUMNS.some((known) => known === name));
  const repeated = columns.filter((name, index) => columns.indexOf(name) !== index);
  const problem =
    unknown.length > 0
      ? `unknown column ${unknown.map((name) => `"${name}"`).join(', ')}: the columns are ${CSV_COLUMNS.join(', ')}`
      : repeated.length > 0
        ? `column "${repeated[0]}" is named twice`
        : !columns.includes('message')
          ? `the header names no message column: the columns are ${CSV_COLUMNS.join(', ')}`
          : undefined;
  if (problem) return { header: header.raw, problem: { line: header.line, message: problem }, entries: [] };
  const at = (name: CsvColumn) => columns.indexOf(name);
  const entries: Entry[] = rows.map(({ line, raw, fields }) => {
    if (fields.length !== columns.length) return { line, raw, error: `has ${fields.length} ${fields.length === 1 ? 'field' : 'fields'}; the header names ${columns.length}` };
    const cell = (name: CsvColumn) => (at(name) < 0 ? '' : (fields[at(name)] ?? ''));
    const message = cell('message');
    if (message.trim() === '') return { line, raw, error: 'message is empty' };
    const userId = cell('user_id');
    const expected = cell('expected');
    return { line, raw, item: { input: { message, ...(userId === '' ? {} : { user_id: userId }) }, ...(expected === '' ? {} : { expected }) } };
  });
  if (unclosed) entries.push({ line: unclosed.line, raw: unclosed.raw, error: 'a quoted field is not closed' });
  return { header: header.raw, entries };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const ITEM_KEYS = ['input', 'expected', 'metadata'];
const INPUT_KEYS = ['message', 'user_id'];

function parseJsonl(text: string): ParsedImport {
  const entries: Entry[] = [];
  text.split('\n').forEach((rawLine, index) => {
    const raw = rawLine.replace(/\r$/, '');
    if (raw.trim() === '') return;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      entries.push({ line, raw, error: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    const checked = jsonItem(value);
    entries.push(typeof checked === 'string' ? { line, raw, error: checked } : { line, raw, item: checked });
  });
  return { entries };
}

/** One line's object as an item, or what is wrong with it. */
function jsonItem(value: unknown): NewItem | string {
  if (!isObject(value)) return 'must be an object: {"input": {"message": "…", "user_id": "…"}, "expected": "…", "metadata": {…}}';
  const extra = Object.keys(value).find((key) => !ITEM_KEYS.includes(key));
  if (extra !== undefined) return `unknown key "${extra}": an item has ${ITEM_KEYS.join(', ')}`;
  const { input, expected, metadata } = value;
  if (!isObject(input)) return 'input must be an object with a message';
  const extraInput = Object.keys(input).find((key) => !INPUT_KEYS.includes(key));
  if (extraInput !== undefined) return `unknown key "input.${extraInput}": input has ${INPUT_KEYS.join(', ')}`;
  if (typeof input.message !== 'string' || input.message.trim() === '') return 'input.message must be a text that is not empty';
  if (input.user_id !== undefined && input.user_id !== null && typeof input.user_id !== 'string') return 'input.user_id must be a text';
  if (expected !== undefined && expected !== null && typeof expected !== 'string') return 'expected must be a text';
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) return 'metadata must be an object';
  return {
    input: { message: input.message, ...(typeof input.user_id === 'string' ? { user_id: input.user_id } : {}) },
    ...(typeof expected === 'string' ? { expected } : {}),
    ...(isObject(metadata) ? { metadata } : {}),
  };
}
