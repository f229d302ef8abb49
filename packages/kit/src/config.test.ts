import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ConfigError, env, parseConfig } from './config.js';

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
