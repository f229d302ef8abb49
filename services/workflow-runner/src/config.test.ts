import { ConfigError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { loadWorkflowRunnerConfig } from './config.js';

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/workflows' };

function problems(environment: Record<string, string>, requireNats = false): string {
  try {
    loadWorkflowRunnerConfig(environment, { requireNats });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadWorkflowRunnerConfig', () => {
  it('defaults to decisions §7 time-outs, no SMTP and the guarded network', () => {
    expect(loadWorkflowRunnerConfig(base)).toMatchObject({
      grpcPort: 50053,
      ingressPort: 50063,
      agentMemoryAddr: '127.0.0.1:50052',
      allowPrivateNetworks: false,
      nodeTimeoutMs: 30_000,
      executionTimeoutMs: 300_000,
      executionLeaseMs: 30_000,
      inboundBodyLimitBytes: 1_048_576,
      smtp: undefined,
    });
  });

  it('reads the SMTP server when SMTP_HOST is set', () => {
    const config = loadWorkflowRunnerConfig({ ...base, SMTP_HOST: 'smtp.example.com', SMTP_PORT: '465', SMTP_SECURE: 'true', SMTP_USER: 'flows', SMTP_PASSWORD: 'secret', SMTP_FROM: 'flows@example.com' });
    expect(config.smtp).toEqual({ host: 'smtp.example.com', port: 465, secure: true, user: 'flows', password: 'secret', from: 'flows@example.com' });
  });

  it('names every bad variable on its own line', () => {
    const message = problems({ DATABASE_URL: 'mysql://x', NODE_TIMEOUT_MS: '5', EXECUTION_CONCURRENCY: 'many', AGENT_MEMORY_ADDR: 'memory' });
    for (const variable of ['DATABASE_URL', 'NODE_TIMEOUT_MS', 'EXECUTION_CONCURRENCY', 'AGENT_MEMORY_ADDR']) expect(message).toContain(variable);
  });

  it('wants a password with an SMTP user', () => {
    expect(problems({ ...base, SMTP_HOST: 'smtp.example.com', SMTP_USER: 'flows' })).toContain('SMTP_PASSWORD');
  });

  it('requires NATS_URL in the distributed mode', () => {
    expect(problems(base, true)).toContain('NATS_URL');
    expect(loadWorkflowRunnerConfig({ ...base, NATS_URL: 'nats://127.0.0.1:4222' }, { requireNats: true }).natsUrl).toBe('nats://127.0.0.1:4222');
  });
});
