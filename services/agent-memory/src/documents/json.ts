import { collapseSpace, unsupportedDocument, type DocumentBlock, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { decodeText } from './text-decoding.js';

/** Between the `key: value` pairs of a record, and between the `path: value` lines of a group. */
const PAIR_SEPARATOR = '; ';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isRecord(value: Json): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function scalarText(value: Json): string {
  return typeof value === 'string' ? collapseSpace(value) : JSON.stringify(value);
}

/**
 * An array of objects is a table: each object one row, `key: value; key: value` (nested values as
 * compact JSON), as CSV rows are written. Anything else is flattened to `path: value` lines, one
 * paragraph per top-level entry.
 */
function parseJson({ bytes }: ParseInput): ParsedContent {
  const text = decodeText(bytes);
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (error) {
    throw unsupportedDocument(`The file is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) {
    const blocks = value.flatMap((record): DocumentBlock[] => {
      const pairs = Object.entries(record).flatMap(([key, field]) => {
        const fieldText = field === null ? '' : scalarText(field);
        return fieldText ? [`${key}: ${fieldText}`] : [];
      });
      return pairs.length === 0 ? [] : [{ kind: 'table_row', text: pairs.join(PAIR_SEPARATOR), page: null }];
    });
    return { title: null, pages: null, blocks };
  }
  const groups: [string, Json][] = isRecord(value) ? Object.entries(value) : Array.isArray(value) ? value.map((item, index) => [`[${index}]`, item]) : [['', value]];
  const blocks = groups.flatMap(([path, item]): DocumentBlock[] => {
    const lines = flatten(path, item);
    return lines.length === 0 ? [] : [{ kind: 'paragraph', text: lines.join(PAIR_SEPARATOR), page: null }];
  });
  return { title: null, pages: null, blocks };
}

/** `path: value` for every scalar under `root`, in document order; iterative, so no nesting depth overflows the stack. */
function flatten(rootPath: string, root: Json): string[] {
  const lines: string[] = [];
  const stack: [string, Json][] = [[rootPath, root]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [path, value] = entry;
    if (Array.isArray(value) || isRecord(value)) {
      const children: [string, Json][] = Array.isArray(value)
        ? value.map((item, index) => [`${path}[${index}]`, item])
        : Object.entries(value).map(([key, item]) => [path ? `${path}.${key}` : key, item]);
      // Reversed onto the stack, so they come off in document order.
      for (const child of children.reverse()) stack.push(child);
    } else if (value !== null && scalarText(value) !== '') {
      lines.push(path ? `${path}: ${scalarText(value)}` : scalarText(value));
    }
  }
  return lines;
}

export const JSON_FORMAT: FormatKind = {
  contentType: 'application/json',
  mimeTypes: ['application/json', 'text/json', 'application/ld+json'],
  extensions: ['json'],
  encoding: 'text',
  recognise: (head) => /^\s*[[{]/.test(head),
  parse: parseJson,
};
