import { parse } from 'csv-parse/sync';
import { collapseSpace, unsupportedDocument, type DocumentBlock, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { decodeText } from './text-decoding.js';

/**
 * Delimiters a CSV export uses (Excel writes ';' where ',' is the decimal mark). csv-parse's own
 * delimiter_auto is not used: it fails on quoted fields and picks a stray character in a file of
 * one column.
 */
const DELIMITERS = [',', ';', '\t', '|'];

/** Between the `header: value` pairs of one record. */
const FIELD_SEPARATOR = '; ';

/** The delimiter the header line uses most; ',' when it uses none (a file of one column). */
function delimiterOf(text: string): string {
  const header = text.slice(0, text.search(/\r?\n|$/));
  const counts = DELIMITERS.map((delimiter) => header.split(delimiter).length - 1);
  const most = Math.max(...counts);
  return most === 0 ? ',' : (DELIMITERS[counts.indexOf(most)] ?? ',');
}

/**
 * The first record names the columns; every later one becomes a table row written as
 * `name: value; name: value`, so a row found alone still says what each value is. Empty values
 * are left out; values past the last named column are named `column N`.
 */
function parseCsv({ bytes }: ParseInput): ParsedContent {
  const text = decodeText(bytes);
  let records: string[][];
  try {
    records = parse(text, { delimiter: delimiterOf(text), relax_column_count: true, relax_quotes: true, skip_empty_lines: true });
  } catch (error) {
    throw unsupportedDocument(`The CSV file could not be read: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const [header = [], ...rows] = records;
  const names = header.map((name, index) => collapseSpace(name) || `column ${index + 1}`);
  const blocks = rows.flatMap((row): DocumentBlock[] => {
    const fields = row.flatMap((value, index) => {
      const text = collapseSpace(value);
      return text ? [`${names[index] ?? `column ${index + 1}`}: ${text}`] : [];
    });
    return fields.length === 0 ? [] : [{ kind: 'table_row', text: fields.join(FIELD_SEPARATOR), page: null }];
  });
  return { title: null, pages: null, blocks };
}

export const CSV_FORMAT: FormatKind = {
  contentType: 'text/csv',
  mimeTypes: ['text/csv', 'application/csv', 'text/comma-separated-values', 'text/tab-separated-values'],
  extensions: ['csv', 'tsv'],
  encoding: 'text',
  parse: parseCsv,
};
