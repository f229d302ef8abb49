import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// In-repo code imports @agent-platform/client from its sources (its `agent-platform-source`
// export; tsconfig.base.json names it too), so tests run without a build. Tests run in Vite's `ssr`
// environment, whose conditions these are (the top-level resolve.conditions is the browser's and
// would not reach them). A list given replaces Vite's defaults, so Vitest's own for Node are named
// again. 'import', 'require' and 'default' apply by themselves; naming 'import' would be harmful:
// Vitest also hands this list to its workers as --conditions, and require() would then load
// packages' ESM entries (pg's require('pg-pool') would get a module namespace, not the class).
const conditions = ['agent-platform-source', 'node', 'development|production'];
// The gateway's routes are imported by @fastify/autoload (gateway/src/routes/api.ts). Left external,
// its import() would reach Node itself: Node strips the types of a route's .ts file but finds no
// `.js` files it imports, and modules Node did load would be other instances than the tests' (a
// second DomainError class). Processed by Vite, its imports join the tests' module graph.
const viteProcessed = ['@fastify/autoload'];
// Projects do not inherit the root config: each one is given them.
const sourceResolution = { ssr: { resolve: { conditions }, noExternal: viteProcessed } };

const MESH_SUITES = ['integration/mesh-*.test.ts', 'integration/observability.test.ts'];

// One workspace, a project per package, plus the end-to-end suites run once per deployment mode.
export default defineConfig({
  test: {
    // Vitest left alone ran one file at a time on a two-core machine (identity's suite: 25 s, 15 s
    // with two workers). Most files wait on PostgreSQL, NATS, processes or a browser rather than
    // the CPU, so two run side by side even on two cores; suites that judge timing opt out
    // (the mesh's, below).
    maxWorkers: Math.max(2, availableParallelism()),
    projects: [
      { ...sourceResolution, test: { name: 'kit', root: 'packages/kit', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { ...sourceResolution, test: { name: 'identity', root: 'services/identity', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { ...sourceResolution, test: { name: 'agent-memory', root: 'services/agent-memory', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      { ...sourceResolution, test: { name: 'workflow-runner', root: 'services/workflow-runner', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      { ...sourceResolution, test: { name: 'webhook-dispatcher', root: 'services/webhook-dispatcher', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { ...sourceResolution, test: { name: 'gateway', root: 'gateway', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      // Unit tests beside the code; test/ runs the client against the real platform, in process.
      { ...sourceResolution, test: { name: 'client', root: 'packages/client', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      { ...sourceResolution, test: { name: 'integration', root: 'test', include: ['integration/**/*.test.ts', 'bench/**/*.test.ts'], exclude: MESH_SUITES, testTimeout: 30_000, hookTimeout: 60_000 } },
      // The mesh's own suites start ten processes each and judge latency, drains and faults: they
      // run after every other suite, one at a time, so no other suite's load skews what they count.
      {
        ...sourceResolution,
        test: { name: 'mesh', root: 'test', include: MESH_SUITES, fileParallelism: false, sequence: { groupOrder: 1 }, testTimeout: 30_000, hookTimeout: 240_000 },
      },
      {
        ...sourceResolution,
        test: {
          name: 'e2e-local',
          root: 'test',
          include: ['e2e/**/*.test.ts'],
          globalSetup: ['e2e/harness/setup-local.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      // The console in Debian's chromium: every page against the all-in-one platform as `pnpm start`
      // runs it, and the journey through it against the distributed mode. The pages are one build
      // served by one gateway in both modes, which differ only behind the gateway, where the REST
      // suites run in both; every page in both modes cost the suite some five minutes.
      ...(['local', 'distributed'] as const).map((mode) => ({
        ...sourceResolution,
        test: {
          name: mode === 'local' ? 'console' : 'console-distributed',
          root: 'test',
          include: mode === 'local' ? ['console/**/*.test.ts'] : ['console/journey.test.ts'],
          globalSetup: ['console/harness/build-console.ts', `e2e/harness/setup-${mode}.ts`],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // A page's answer is polled for: a sign-in's password hash alone can take over the default
          // second on a loaded two-core CI machine (seen: an "unauthorized" alert missed).
          expect: { poll: { timeout: 10_000 } },
        },
      })),
      {
        ...sourceResolution,
        test: {
          name: 'e2e-distributed',
          root: 'test',
          include: ['e2e/**/*.test.ts'],
          globalSetup: ['e2e/harness/setup-distributed.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
