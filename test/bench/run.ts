// Entry point of `pnpm bench`: runs each benchmark in turn; each prints its own figures.
// `pnpm bench --quick`: shorter runs and smaller data sets, for spot checks (figures indicative only).
import { availableParallelism } from 'node:os';

if (process.argv.includes('--quick')) {
  process.env.BENCH_QUICK = '1';
  process.env.BENCH_VECTOR_SIZES ??= '1000,10000';
  process.env.BENCH_WORKFLOW_SECONDS ??= '5';
  process.env.BENCH_EVENTS ??= '50';
}
console.log(`pnpm bench on ${availableParallelism()} cores, Node ${process.version}${process.env.BENCH_QUICK === '1' ? ' (quick mode)' : ''}`);
const { benchVectorIndex, printTable } = await import('./vector-index.js');

await import('./startup-and-throughput.js');
await import('./webhook-deliveries.js');
printTable(await benchVectorIndex({}), 'embeddings');
await import('./agent-memory.js');
await import('./workflow-executions.js');
