// Entry point of `pnpm bench`: runs each benchmark in turn; each prints its own figures.
await import('./startup-and-throughput.js');
await import('./webhook-deliveries.js');
