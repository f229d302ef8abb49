// Entry point of `pnpm bench`: runs each benchmark in turn; each prints its own figures.
import { benchVectorIndex, printTable } from './vector-index.js';

await import('./startup-and-throughput.js');
await import('./webhook-deliveries.js');
printTable(await benchVectorIndex({}), 'embeddings');
await import('./agent-memory.js');
await import('./workflow-executions.js');
