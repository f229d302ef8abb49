import { randomBytes } from 'node:crypto';
import { ConfigError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { loadWebhookDispatcherConfig } from './config.js';

const key = randomBytes(32).toString('base64');
const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/webhooks', WEBHOOK_SECRET_KEY: key };

function problems(environment: Record<string, string>): string {
  try {
    loadWebhookDispatcherConfig(environment);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadWebhookDispatcherConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadWebhookDispatcherConfig(base);
    expect(config).toMatchObject({
      grpcHost: '0.0.0.0',
      grpcPort: 50054,
      allowPrivateNetworkUrls: false,
      retryScheduleSeconds: [0, 60, 300, 1800, 7200],
      timeoutMs: 10_000,
      deliveryConcurrency: 16,
      natsUrl: 'nats://localhost:4222',
      logLevel: 'info',
      otlpEndpoint: undefined,
    });
    expect(config.secretKey.equals(Buffer.from(key, 'base64'))).toBe(true);
  });

  it('reads every variable', () => {
    const config = loadWebhookDispatcherConfig({
      ...base,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      ALLOW_PRIVATE_NETWORK_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0,1,1',
      WEBHOOK_TIMEOUT_MS: '2500',
      DELIVERY_CONCURRENCY: '4',
      NATS_URL: 'nats://nats:4222',
      LOG_LEVEL: 'debug',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    expect(config).toMatchObject({
      grpcHost: '127.0.0.1',
      grpcPort: 0,
      allowPrivateNetworkUrls: true,
      retryScheduleSeconds: [0, 1, 1],
      timeoutMs: 2_500,
      deliveryConcurrency: 4,
      natsUrl: 'nats://nats:4222',
      logLevel: 'debug',
      otlpEndpoint: 'http://collector:4318',
    });
  });

  it('requires the secret key, 32 bytes of base64, and never echoes it', () => {
    expect(problems({ DATABASE_URL: base.DATABASE_URL })).toMatch(/WEBHOOK_SECRET_KEY: is required/);
    const short = randomBytes(16).toString('base64');
    const message = problems({ ...base, WEBHOOK_SECRET_KEY: short });
    expect(message).toMatch(/WEBHOOK_SECRET_KEY: must be the base64 of exactly 32 bytes/);
    expect(message).not.toContain(short);
    expect(problems({ ...base, WEBHOOK_SECRET_KEY: `${key}!` })).toMatch(/WEBHOOK_SECRET_KEY/);
  });

  it('reports one line per bad variable', () => {
    const message = problems({
      DATABASE_URL: 'mysql://x',
      WEBHOOK_SECRET_KEY: key,
      WEBHOOK_RETRY_SCHEDULE: '0,soon',
      WEBHOOK_TIMEOUT_MS: '0',
      DELIVERY_CONCURRENCY: 'many',
      ALLOW_PRIVATE_NETWORK_URLS: 'yes',
    });
    const lines = message.split('\n').slice(1);
    expect(lines.map((line) => line.trim().split(':')[0])).toEqual([
      'DATABASE_URL',
      'ALLOW_PRIVATE_NETWORK_URLS',
      'WEBHOOK_RETRY_SCHEDULE',
      'WEBHOOK_TIMEOUT_MS',
      'DELIVERY_CONCURRENCY',
    ]);
    expect(message).toMatch(/WEBHOOK_RETRY_SCHEDULE: entry 2 \("soon"\)/);
  });
});
