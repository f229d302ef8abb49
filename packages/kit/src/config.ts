import { z } from 'zod';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Parses the environment once, at start. A bad environment throws one ConfigError whose message
 * has a line per offending variable, so a misconfigured process fails fast and says why.
 */
export function parseConfig<Schema extends z.ZodType>(
  schema: Schema,
  env: Record<string, string | undefined> = process.env,
): z.output<Schema> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const variable = issue.path.map(String).join('.') || '(environment)';
    return `  ${variable}: ${issue.message}`;
  });
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

// What grpc-js resolves (see Http2Transport): one `host:port`, `dns:///host:port`, or a fixed list.
const GRPC_TARGET = /^(?:(?:dns:(?:\/\/[^/\s]*)?\/)?[^\s:/,]+:\d{1,5}|ipv4:\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}(?:,\d{1,3}(?:\.\d{1,3}){3}:\d{1,5})*)$/;

// AES-256 needs exactly 32 bytes of key.
const AES_KEY_BYTES = 32;

/** Reusable environment-variable field parsers. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  boolean: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((value) => value === 'true' || value === '1'),
  url: () => z.url(),
  /** A gRPC service's address: `host:port`, `dns:///host:port` (every replica) or `ipv4:a:port,b:port`. */
  grpcTarget: (fallback: string) =>
    z.string().regex(GRPC_TARGET, { error: 'must be host:port, dns:///host:port or ipv4:ip:port[,ip:port…]' }).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  nonNegativeInt: (fallback: number) => z.coerce.number().int().min(0).default(fallback),
  logLevel: (fallback: 'warn' | 'info' = 'info') => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(fallback),
  /** An AES-256 key (SecretBox): base64 of exactly 32 bytes, required. Never logged. */
  aesKey: () =>
    z
      .string({ error: `is required (base64 of ${AES_KEY_BYTES} random bytes)` })
      .refine((value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === AES_KEY_BYTES, {
        error: `must be the base64 of exactly ${AES_KEY_BYTES} bytes`,
      })
      .transform((value) => Buffer.from(value, 'base64')),
};

/**
 * For a process's `main`: the configuration, or — when it is invalid — its lines on stderr and
 * exit code 1, without a stack trace that would bury them.
 */
export function loadConfigOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/** Runs several parsers and reports every bad variable of all of them in one ConfigError. */
export function parseAll<T extends unknown[]>(...loaders: { [K in keyof T]: () => T[K] }): T {
  const results: unknown[] = [];
  const problems: string[] = [];
  for (const load of loaders) {
    try {
      results.push(load());
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.message.split('\n').slice(1));
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n${[...new Set(problems)].join('\n')}`);
  return results as T;
}
