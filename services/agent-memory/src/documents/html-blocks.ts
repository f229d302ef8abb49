import { parseHTML } from 'linkedom';
import { CELL_SEPARATOR, collapseSpace, tidyCode, type DocumentBlock } from './document.js';

/**
 * The slice of the DOM, as linkedom builds it, that the walker reads. linkedom's typings are
 * written against the DOM lib, which the services do not load, so they are read through this.
 */
export interface DomNode {
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: Iterable<DomNode>;
}

export interface DomElement extends DomNode {
  readonly localName: string;
  querySelectorAll(selectors: string): Iterable<DomElement>;
  closest(selectors: string): DomElement | null;
  remove(): void;
}

export interface DomDocument {
  readonly title: string;
  readonly body: DomElement | null;
  querySelectorAll(selectors: string): Iterable<DomElement>;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

/**
 * A page, or a fragment of one (what mammoth, marked and readability write). `url` becomes the
 * page's location, against which its relative links resolve.
 */
export function parseHtmlDocument(html: string, url?: string): DomDocument {
  // Browsers put content that lacks <html> and <body> in a body; linkedom does not, so it is done here.
  const page = /<(html|body)[\s>]/i.test(html) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`;
  const window = parseHTML(page, url === undefined ? undefined : { location: new URL(url) }) as unknown as { document: DomDocument };
  return window.document;
}

const HEADING_LEVELS: Readonly<Record<string, number>> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };

/** Elements whose text is not the page's prose: code, styling, media, form controls. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'canvas', 'iframe', 'object', 'embed', 'video', 'audio', 'img', 'picture', 'map', 'button', 'select', 'input', 'textarea']);

/** Elements that end the text before them and start their own (the rest are inline). */
const BLOCK_ELEMENTS = new Set([
  ...Object.keys(HEADING_LEVELS),
  ...['address', 'article', 'aside', 'blockquote', 'body', 'caption', 'center', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure'],
  ...['footer', 'form', 'header', 'hgroup', 'hr', 'html', 'legend', 'li', 'main', 'menu', 'nav', 'ol', 'p', 'pre', 'section', 'summary', 'table'],
  ...['tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul'],
]);

type ProseKind = 'paragraph' | 'list_item';

interface TableState {
  header: string | undefined;
  inHead: boolean;
}

function isElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT_NODE;
}

/** Lower case: readability writes the elements it renames in upper case. */
function tagOf(element: DomElement): string {
  return element.localName.toLowerCase();
}

/**
 * The blocks of an HTML tree, in document order: h1–h6 are headings, li list items, each tr a
 * table row (cells joined with ' | '; a row of th cells or in thead is the table's header),
 * pre code, and every other run of text between block elements a paragraph.
 */
export function htmlToBlocks(root: DomNode): DocumentBlock[] {
  const blocks: DocumentBlock[] = [];
  const tables: TableState[] = [];
  let pending = '';

  const flush = (kind: ProseKind): void => {
    const text = collapseSpace(pending);
    pending = '';
    if (text) blocks.push({ kind, text, page: null });
  };

  const visitChildren = (node: DomNode, kind: ProseKind): void => {
    for (const child of node.childNodes) visit(child, kind);
  };

  const visit = (node: DomNode, kind: ProseKind): void => {
    if (node.nodeType === TEXT_NODE) {
      pending += node.textContent ?? '';
      return;
    }
    if (!isElement(node)) return;
    const tag = tagOf(node);
    if (SKIPPED.has(tag)) return;
    if (tag === 'br') {
      pending += ' ';
      return;
    }
    if (!BLOCK_ELEMENTS.has(tag)) {
      visitChildren(node, kind);
      return;
    }
    flush(kind);
    const level = HEADING_LEVELS[tag];
    if (level !== undefined) {
      const text = inlineText(node);
      if (text) blocks.push({ kind: 'heading', text, level, page: null });
    } else if (tag === 'pre') {
      const text = tidyCode(node.textContent ?? '');
      if (text.trim()) blocks.push({ kind: 'code', text, page: null });
    } else if (tag === 'tr') {
      pushRow(node, tables.at(-1));
    } else if (tag === 'table') {
      tables.push({ header: undefined, inHead: false });
      visitChildren(node, kind);
      tables.pop();
    } else if (tag === 'thead') {
      const table = tables.at(-1);
      if (table) table.inHead = true;
      visitChildren(node, kind);
      if (table) table.inHead = false;
    } else {
      // Inside a list item, its paragraphs are the item's text.
      const inner = tag === 'li' ? 'list_item' : kind;
      visitChildren(node, inner);
      flush(inner);
    }
  };

  const pushRow = (row: DomElement, table: TableState | undefined): void => {
    const cells = [...row.childNodes].filter(isElement).filter((cell) => tagOf(cell) === 'td' || tagOf(cell) === 'th');
    const texts = cells.map(inlineText);
    if (texts.every((text) => text === '')) return;
    const text = texts.join(CELL_SEPARATOR);
    const isHeader = table !== undefined && table.header === undefined && (table.inHead || cells.every((cell) => tagOf(cell) === 'th'));
    if (table && isHeader) table.header = text;
    const header = isHeader ? undefined : table?.header;
    blocks.push({ kind: 'table_row', text, page: null, ...(header === undefined ? {} : { tableHeader: header }) });
  };

  visit(root, 'paragraph');
  flush('paragraph');
  return blocks;
}

/** All the text under an element on one line: block boundaries and line breaks become spaces. */
function inlineText(element: DomElement): string {
  const parts: string[] = [];
  const collect = (node: DomNode): void => {
    if (node.nodeType === TEXT_NODE) parts.push(node.textContent ?? '');
    if (!isElement(node) || SKIPPED.has(tagOf(node))) return;
    const separate = tagOf(node) === 'br' || BLOCK_ELEMENTS.has(tagOf(node));
    if (separate) parts.push(' ');
    for (const child of node.childNodes) collect(child);
    if (separate) parts.push(' ');
  };
  for (const child of element.childNodes) collect(child);
  return collapseSpace(parts.join(''));
}
