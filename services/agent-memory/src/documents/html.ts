import { Readability } from '@mozilla/readability';
import { collapseSpace, firstHeading, type DocumentBlock, type FormatKind, type ParseInput, type ParsedContent } from './document.js';
import { htmlToBlocks, parseHtmlDocument, type DomDocument } from './html-blocks.js';
import { decodeText } from './text-decoding.js';

/** What surrounds a page's content: navigation, sidebars, landmarks that are not the main text. */
const CHROME = 'nav, aside, [role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"], [aria-hidden="true"]';
/** The page's own header and footer; an article's header or footer is part of the article. */
const PAGE_EDGES = 'header, footer';

/**
 * A web page reduced to its main text: readability picks the article out of navigation, headers,
 * footers and sidebars; a page where it finds none is read whole, less those parts.
 */
function parseHtmlPage({ bytes, url }: ParseInput): ParsedContent {
  const html = decodeText(bytes, { html: true });
  const page = withoutChrome(parseHtmlDocument(html, url));
  const pageTitle = collapseSpace(page.title) || null;
  const pageHeading = [...page.querySelectorAll('h1')].map((h1) => collapseSpace(h1.textContent ?? '')).find((text) => text !== '') ?? null;
  // Readability rewrites the tree it is given; the fallback below parses the page afresh.
  const article = new Readability(page).parse();
  const content = article?.content ? parseHtmlDocument(article.content, url).body : null;
  if (!content) {
    const body = withoutChrome(parseHtmlDocument(html, url)).body;
    const blocks = body ? htmlToBlocks(body) : [];
    return { title: pageTitle ?? firstHeading(blocks, 1), pages: null, blocks };
  }
  const title = collapseSpace(article?.title ?? '') || pageTitle || pageHeading;
  return { title, pages: null, blocks: withTopHeading(htmlToBlocks(content), pageHeading ?? title) };
}

/**
 * Readability scores away most chrome, but keeps all of a short page; these parts are never the
 * page's text, so they go first.
 */
function withoutChrome(page: DomDocument): DomDocument {
  for (const element of [...page.querySelectorAll(CHROME)]) element.remove();
  for (const element of [...page.querySelectorAll(PAGE_EDGES)]) if (!element.closest('article, main')) element.remove();
  return page;
}

/**
 * Readability takes the page's heading out of the article (it shows the title apart, as the only
 * h1) and turns the article's h1s into h2s: the heading goes back in, over all of them.
 */
function withTopHeading(blocks: DocumentBlock[], heading: string | null): DocumentBlock[] {
  if (heading === null || blocks.some((block) => block.kind === 'heading' && block.text === heading)) return blocks;
  return [{ kind: 'heading', text: heading, level: 1, page: null }, ...blocks];
}

export const HTML_FORMAT: FormatKind = {
  contentType: 'text/html',
  mimeTypes: ['text/html', 'application/xhtml+xml'],
  extensions: ['html', 'htm', 'xhtml'],
  encoding: 'text',
  recognise: (head) => /^\s*(<!--[\s\S]*?-->\s*)*<(!doctype html|html[\s>])/i.test(head),
  parse: parseHtmlPage,
};
