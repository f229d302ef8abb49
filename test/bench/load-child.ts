/**
 * The load generator in a process of its own, so it never shares an event loop with what it
 * measures or with the other side of a comparison. Reads its options as JSON from argv[2] and
 * prints one JSON line with the figures.
 */
import autocannon from 'autocannon';
import type { LoadOptions } from './load.js';

const options = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
const result = await autocannon({
  url: options.url,
  method: options.method ?? 'GET',
  connections: options.connections,
  duration: options.seconds,
  headers: options.headers ?? {},
  ...(options.body === undefined ? {} : { body: options.body }),
  ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
});
const { user, system } = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({ requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors, total: result.requests.total, cpuMs: (user + system) / 1_000 })}\n`,
);
