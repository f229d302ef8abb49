// Vitest global setup: the console the gateway serves is built from the current sources first.
export { buildConsole as default } from '../../e2e/harness/processes.js';
