/**
 * Document parsing (decisions §17), in process, no platform: what a document worker spends on a
 * 100-page text PDF (the fixtures' headings, paragraphs and a table), from bytes to chunks, and
 * what an upload request spends inspecting a 20 MiB file (a PDF and plain text).
 * Targets: parse + chunk of the 100-page PDF well under 5 s on two cores (the whole pipeline's
 * budget is 10 s with embedding); inspection well under 100 ms.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/document-parsing.ts
 */
import { chunkDocument, inspectDocument, parseDocument } from '../../services/agent-memory/src/documents/parsing.js';
import { multiPagePdf } from '../../services/agent-memory/test/fixtures/documents.js';
import { recordFigure } from './figures.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = QUICK ? 3 : 10;
const PAGES = 100;
const LARGE_BYTES = 20 * 1024 * 1024;
const MIB = 1024 * 1024;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function timed<T>(run: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

async function main(): Promise<void> {
  const pdf = await multiPagePdf({ pages: PAGES });
  // The first parse also loads pdf.js (once per process): counted apart.
  const cold = await timed(async () => chunkDocument(await parseDocument({ bytes: pdf, format: 'pdf' })));
  const parses: number[] = [];
  const chunkings: number[] = [];
  let chunks = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const parse = await timed(() => parseDocument({ bytes: pdf, format: 'pdf' }));
    const chunk = await timed(() => chunkDocument(parse.value));
    parses.push(parse.ms);
    chunkings.push(chunk.ms);
    chunks = chunk.value.length;
  }
  const total = median(parses.map((ms, index) => ms + (chunkings[index] ?? 0)));
  console.log(`document parsing: ${PAGES}-page PDF (${(pdf.length / 1024).toFixed(0)} KiB) → ${chunks} chunks, median of ${ROUNDS}:`);
  console.log(`  parse ${median(parses).toFixed(0)} ms, chunk ${median(chunkings).toFixed(1)} ms, together ${total.toFixed(0)} ms (first run, loading pdf.js: ${cold.ms.toFixed(0)} ms)`);
  console.log(`  peak resident memory of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  recordFigure(`document parsing: ${PAGES}-page PDF, parse + chunk, p50`, { value: total, unit: 'ms', better: 'lower', target: 5000 });

  const inputs = [
    { name: 'PDF', bytes: await multiPagePdf({ pages: 3, paddingBytes: LARGE_BYTES }), contentType: 'application/pdf', filename: 'large.pdf' },
    { name: 'plain text', bytes: Buffer.from('Refunds reach the original payment method within five working days.\n'.repeat(LARGE_BYTES / 69)), contentType: 'text/plain', filename: 'large.txt' },
  ];
  for (const input of inputs) {
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) times.push((await timed(() => inspectDocument(input))).ms);
    console.log(`document inspection: ${input.name} of ${(input.bytes.length / MIB).toFixed(1)} MiB, median of ${ROUNDS}: ${median(times).toFixed(1)} ms`);
    recordFigure(`document inspection: ${input.name} of 20 MiB, p50`, { value: median(times), unit: 'ms', better: 'lower', target: 100 });
  }
}

await main();
