import { defineConfig } from 'vitest/config';

// One workspace, a project per package, plus the end-to-end suites run once per deployment mode.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'kit', root: 'packages/kit', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { test: { name: 'identity', root: 'services/identity', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { test: { name: 'agent-memory', root: 'services/agent-memory', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      { test: { name: 'workflow-runner', root: 'services/workflow-runner', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      { test: { name: 'webhook-dispatcher', root: 'services/webhook-dispatcher', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      { test: { name: 'gateway', root: 'gateway', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] } },
      // Unit tests beside the code; test/ runs the client against the real platform, in process.
      { test: { name: 'client', root: 'packages/client', include: ['src/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      { test: { name: 'integration', root: 'test', include: ['integration/**/*.test.ts', 'bench/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 60_000 } },
      {
        test: {
          name: 'e2e-local',
          root: 'test',
          include: ['e2e/**/*.test.ts'],
          globalSetup: ['e2e/harness/setup-local.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
      {
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
