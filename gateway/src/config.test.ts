import { ConfigError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { limitsOf, loadGatewayConfig } from './config.js';

describe('loadGatewayConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadGatewayConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      PUBLIC_BASE_URL: 'http://localhost:8080',
      WEBHOOK_HOST: 'http://localhost:8080/hooks',
      IDENTITY_ADDR: '127.0.0.1:50051',
      AGENT_MEMORY_ADDR: '127.0.0.1:50052',
      WEBHOOK_DISPATCHER_ADDR: '127.0.0.1:50054',
      AUTH_RATE_LIMIT_PER_MINUTE: 300,
      LOGIN_FAILURE_LIMIT: 10,
      LOGIN_FAILURE_WINDOW_SECONDS: 900,
      AUTH_CACHE_TTL_SECONDS: 30,
      GRPC_DEADLINE_MS: 5000,
      MODEL_DEADLINE_MS: 300_000,
      TRUST_PROXY: false,
      BODY_LIMIT_BYTES: 1_048_576,
      LOG_LEVEL: 'info',
      JWT_ISSUER: 'agent-platform',
      JWT_AUDIENCE: 'agent-platform-api',
    });
    expect(config.REDIS_URL).toBeUndefined();
    expect(Object.fromEntries(config.RATE_LIMITS)).toEqual({
      free: { perMinute: 60, perDay: 1000 },
      pro: { perMinute: 600, perDay: 50_000 },
      enterprise: { perMinute: 0, perDay: 0 },
    });
  });

  it('parses RATE_LIMITS and falls back to the first plan for unknown plan names', () => {
    const config = loadGatewayConfig({ RATE_LIMITS: ' team:5/50 , solo:1/2' });
    expect(limitsOf(config, 'solo')).toEqual({ perMinute: 1, perDay: 2 });
    expect(limitsOf(config, 'mystery')).toEqual({ perMinute: 5, perDay: 50 });
  });

  it.each([['free:60'], ['free:60/1000,'], ['free:-1/10'], ['free:1.5/10'], ['Free:1/1'], ['free:1/1,free:2/2'], ['']])(
    'rejects RATE_LIMITS=%j',
    (value) => {
      expect(() => loadGatewayConfig({ RATE_LIMITS: value })).toThrow(/RATE_LIMITS/);
    },
  );

  it('fails with one line per bad variable', () => {
    let thrown: unknown;
    try {
      loadGatewayConfig({ PORT: 'eighty', TRUST_PROXY: 'yes', IDENTITY_ADDR: 'nowhere', AGENT_MEMORY_ADDR: 'memory', WEBHOOK_DISPATCHER_ADDR: 'x:y', REDIS_URL: 'not a url' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const variables = (thrown as ConfigError).message.split('\n').slice(1).map((line) => line.trim().split(':')[0]);
    expect(variables.sort()).toEqual(['AGENT_MEMORY_ADDR', 'IDENTITY_ADDR', 'PORT', 'REDIS_URL', 'TRUST_PROXY', 'WEBHOOK_DISPATCHER_ADDR']);
  });
});
