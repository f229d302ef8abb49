import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ConfigError, env, parseAll, parseConfig } from './config.js';

const schema = z.object({
  PORT: env.port(8080),
  DEBUG: env.boolean(false),
  DATABASE_URL: env.url(),
});

describe('parseConfig', () => {
  it('applies defaults and coerces', () => {
    expect(parseConfig(schema, { DATABASE_URL: 'postgres://localhost/x', DEBUG: 'true' })).toEqual({
      PORT: 8080,
      DEBUG: true,
      DATABASE_URL: 'postgres://localhost/x',
    });
  });

  it('fails with one line per bad variable', () => {
    let thrown: unknown;
    try {
      parseConfig(schema, { PORT: 'eighty', DEBUG: 'maybe' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const lines = (thrown as ConfigError).message.split('\n').slice(1);
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => line.trim().split(':')[0])).toEqual(['PORT', 'DEBUG', 'DATABASE_URL']);
  });
});

describe('parseAll', () => {
  const other = z.object({ WELCOME_CREDITS: z.coerce.number().int().min(0).default(1000) });

  it('returns every parsed configuration', () => {
    const source = { DATABASE_URL: 'postgres://localhost/x', WELCOME_CREDITS: '5' };
    const [first, second] = parseAll(
      () => parseConfig(schema, source),
      () => parseConfig(other, source),
    );
    expect(first.DATABASE_URL).toBe('postgres://localhost/x');
    expect(second.WELCOME_CREDITS).toBe(5);
  });

  it('reports the bad variables of every parser together, each once', () => {
    const source = { PORT: 'eighty', WELCOME_CREDITS: '-1' };
    expect(() =>
      parseAll(
        () => parseConfig(schema, source),
        () => parseConfig(other, source),
        () => parseConfig(other, source),
      ),
    ).toThrow(/^Invalid configuration:\n {2}PORT: .*\n {2}DATABASE_URL: .*\n {2}WELCOME_CREDITS: [^\n]*$/);
  });
});

describe('env.grpcTarget', () => {
  const schema = z.object({ PEER_ADDR: env.grpcTarget('127.0.0.1:50051') });
  it.each(['identity:50051', 'dns:///identity.platform.svc:50051', 'dns://10.0.0.10/identity:50051', 'ipv4:127.0.0.1:50051,127.0.0.1:50061', 'ipv4:10.1.2.3:1'])('accepts %s as grpc-js resolves it', (target) => {
    expect(parseConfig(schema, { PEER_ADDR: target }).PEER_ADDR).toBe(target);
  });
  it.each(['identity', 'http://identity:50051', 'identity:50051,other:50051', 'ipv4:identity:50051', 'dns:///identity', ' identity:1'])('refuses %s', (target) => {
    expect(() => parseConfig(schema, { PEER_ADDR: target })).toThrow(/PEER_ADDR: must be host:port/);
  });
});
