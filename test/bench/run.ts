// Entry point of `pnpm bench`: runs each benchmark in turn; each prints its own figures.
// `pnpm bench --quick`: shorter runs and smaller data sets, for spot checks (figures indicative only).
// `pnpm bench --check`: then holds the figures against test/bench/baseline.json and fails on a
// regression of more than 30 %; `--write-baseline` records this run's figures as the new baseline.
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { compareWithBaseline, describeTargets, recordedFigures, REGRESSION_TOLERANCE, type Baseline } from './figures.js';

if (process.argv.includes('--quick')) {
  process.env.BENCH_QUICK = '1';
  process.env.BENCH_VECTOR_SIZES ??= '1000,10000';
  process.env.BENCH_WORKFLOW_SECONDS ??= '5';
  process.env.BENCH_EVENTS ??= '50';
}
console.log(`pnpm bench on ${availableParallelism()} cores, Node ${process.version}${process.env.BENCH_QUICK === '1' ? ' (quick mode)' : ''}`);
const { benchVectorIndex, printTable } = await import('./vector-index.js');

await import('./startup-and-throughput.js');
await import('./mesh.js');
await import('./webhook-deliveries.js');
printTable(await benchVectorIndex({}), 'embeddings');
await (await import('./embedder.js')).benchEmbedder();
await import('./agent-memory.js');
await import('./chat-tools.js');
await import('./memory-extraction.js');
await import('./document-parsing.js');
await import('./documents-pipeline.js');
await import('./mcp.js');
await import('./runs-list.js');
await import('./evals.js');
await import('./workflow-executions.js');
await import('./workflow-approvals.js');
await import('./console.js');

const targets = describeTargets(recordedFigures());
if (targets.length > 0) console.log(`figures against their targets:\n${targets.join('\n')}`);

const baselineFile = new URL('./baseline.json', import.meta.url);
const machine = { cores: availableParallelism(), node: process.version, quick: process.env.BENCH_QUICK === '1' };
if (process.argv.includes('--write-baseline')) {
  await writeFile(baselineFile, `${JSON.stringify({ machine, figures: recordedFigures() } satisfies Baseline, null, 2)}\n`);
  console.log(`baseline written to ${baselineFile.pathname}`);
}
if (process.argv.includes('--check')) {
  const baseline = JSON.parse(
    await readFile(baselineFile, 'utf8').catch(() => {
      throw new Error(`no baseline at ${baselineFile.pathname}: record one with pnpm bench --write-baseline`);
    }),
  ) as Baseline;
  if (baseline.machine.cores !== machine.cores || baseline.machine.quick !== machine.quick) {
    console.log(`note: the baseline was measured on ${baseline.machine.cores} cores${baseline.machine.quick ? ', quick mode' : ''}; this run differs, so compare with care`);
  }
  const { lines, regressions } = compareWithBaseline(baseline.figures, recordedFigures());
  console.log(`against the baseline (${baseline.machine.cores} cores, Node ${baseline.machine.node}), failing beyond ${REGRESSION_TOLERANCE * 100}% worse:`);
  console.log(lines.join('\n'));
  if (regressions.length > 0) {
    console.log(`${regressions.length} figure(s) regressed: ${regressions.join('; ')}`);
    process.exitCode = 1;
  }
}
