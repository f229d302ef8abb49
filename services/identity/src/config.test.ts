import { ConfigError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { loadIdentityConfig } from './config.js';

const DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/identity';
const KEY = Buffer.alloc(32, 7);
const JWT_KEY_ENCRYPTION_KEY = KEY.toString('base64');

describe('loadIdentityConfig', () => {
  it('applies the defaults of decisions §11', () => {
    expect(loadIdentityConfig({ DATABASE_URL, JWT_KEY_ENCRYPTION_KEY })).toEqual({
      databaseUrl: DATABASE_URL,
      grpcHost: '0.0.0.0',
      grpcPort: 50051,
      welcomeCredits: 1000,
      creditsLowThreshold: 100,
      defaultPlan: 'free',
      accessTokenTtlSeconds: 3600,
      refreshTokenTtlSeconds: 2_592_000,
      jwtIssuer: 'agent-platform',
      jwtAudience: 'agent-platform-api',
      jwtKeyEncryptionKey: KEY,
      logLevel: 'info',
      otlpEndpoint: undefined,
      natsUrl: undefined,
      outboxPollIntervalMs: 1_000,
      outboxRetryMaxMs: 30_000,
    });
  });

  it('reads every variable', () => {
    const config = loadIdentityConfig({
      DATABASE_URL: 'postgresql://identity:secret@db:5432/identity',
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      WELCOME_CREDITS: '0',
      CREDITS_LOW_THRESHOLD: '5',
      DEFAULT_PLAN: 'enterprise',
      ACCESS_TOKEN_TTL_SECONDS: '600',
      REFRESH_TOKEN_TTL_SECONDS: '86400',
      JWT_ISSUER: 'iss',
      JWT_AUDIENCE: 'aud',
      LOG_LEVEL: 'debug',
      NATS_URL: 'nats://nats:4222',
      OUTBOX_POLL_INTERVAL_MS: '250',
      OUTBOX_RETRY_MAX_MS: '5000',
      JWT_KEY_ENCRYPTION_KEY,
    });
    expect(config).toMatchObject({
      grpcPort: 0,
      welcomeCredits: 0,
      creditsLowThreshold: 5,
      defaultPlan: 'enterprise',
      accessTokenTtlSeconds: 600,
      logLevel: 'debug',
      natsUrl: 'nats://nats:4222',
      outboxPollIntervalMs: 250,
      outboxRetryMaxMs: 5000,
    });
  });

  it('fails with one line per bad variable', () => {
    let error: unknown;
    try {
      loadIdentityConfig({ DATABASE_URL: 'mysql://x', DEFAULT_PLAN: 'gold', WELCOME_CREDITS: '-1', JWT_KEY_ENCRYPTION_KEY: 'c2hvcnQ=' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const variable of ['DATABASE_URL', 'DEFAULT_PLAN', 'WELCOME_CREDITS', 'JWT_KEY_ENCRYPTION_KEY']) expect(message).toContain(`  ${variable}: `);
    expect(() => loadIdentityConfig({})).toThrow(/DATABASE_URL/);
  });

  it('requires a nats:// NATS_URL for the distributed process only', () => {
    expect(() => loadIdentityConfig({ DATABASE_URL, JWT_KEY_ENCRYPTION_KEY }, { requireNats: true })).toThrow('  NATS_URL: ');
    expect(() => loadIdentityConfig({ DATABASE_URL, JWT_KEY_ENCRYPTION_KEY, NATS_URL: 'http://nats:4222' })).toThrow('  NATS_URL: must be a nats:// URL');
    expect(loadIdentityConfig({ DATABASE_URL, JWT_KEY_ENCRYPTION_KEY, NATS_URL: 'nats://nats:4222', PAYMENT_PROVIDER: 'immediate' }, { requireNats: true }).natsUrl).toBe('nats://nats:4222');
  });

  it('outside the all-in-one mode, refuses the immediate payment provider unless PAYMENT_PROVIDER=immediate says it (decisions §18)', () => {
    const distributed = { DATABASE_URL, JWT_KEY_ENCRYPTION_KEY, NATS_URL: 'nats://nats:4222' };
    expect(() => loadIdentityConfig(distributed, { requireNats: true })).toThrow(/^ {2}PAYMENT_PROVIDER: is required outside the all-in-one mode: the only provider, immediate, grants purchased credits without charging anyone/m);
    expect(() => loadIdentityConfig({ ...distributed, PAYMENT_PROVIDER: 'stripe' }, { requireNats: true })).toThrow('  PAYMENT_PROVIDER: must be one of immediate');
    expect(() => loadIdentityConfig({ ...distributed, PAYMENT_PROVIDER: 'immediate' }, { requireNats: true })).not.toThrow();
    // The all-in-one launcher runs on it without being told.
    expect(() => loadIdentityConfig({ DATABASE_URL, JWT_KEY_ENCRYPTION_KEY })).not.toThrow();
  });
});
