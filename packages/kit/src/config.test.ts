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
