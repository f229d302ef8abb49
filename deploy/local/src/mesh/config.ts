import { env, parseConfig } from '@agent-platform/kit';
import { z } from 'zod';
import { MESH_PARTS, type MeshPart } from './mesh.js';

/**
 * `MESH_REPLICAS`: one number for every part (`2`), or some parts by name
 * (`agent-memory=2,workflow-runner=3`; the others run one).
 */
const replicas = z
  .string()
  .default('1')
  .transform((value, ctx) => {
    const counts = Object.fromEntries(MESH_PARTS.map((part) => [part, 1])) as Record<MeshPart, number>;
    const count = (text: string) => (/^[1-9]\d?$/.test(text.trim()) ? Number(text.trim()) : undefined);
    const all = count(value);
    if (all !== undefined) return Object.fromEntries(MESH_PARTS.map((part) => [part, all])) as Record<MeshPart, number>;
    for (const entry of value.split(',')) {
      const [part, text = ''] = entry.split('=').map((word) => word.trim());
      const n = count(text);
      if (!MESH_PARTS.includes(part as MeshPart) || n === undefined) {
        ctx.addIssue({ code: 'custom', message: `must be a count (1–99) or part=count pairs, parts being ${MESH_PARTS.join(', ')}` });
        return z.NEVER;
      }
      counts[part as MeshPart] = n;
    }
    return counts;
  });

const schema = z.object({
  /** Where the keys made on first start are kept: the same as `pnpm start`'s, so both read the same data. */
  DATA_DIR: z.string().min(1).default('./.data'),
  PORT: env.port(8080),
  /** A PostgreSQL server; the service databases are made on it when missing. */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }).default('postgres://postgres@127.0.0.1:5432/postgres'),
  DATABASE_NAME_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,40}$/, 'must be lower-case letters, digits and underscores')
    .default('agent_platform_'),
  NATS_URL: z.url({ protocol: /^(nats|tls)$/, error: 'must be a nats:// URL' }).default('nats://127.0.0.1:4222'),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// URL' }).default('redis://127.0.0.1:6379'),
  MESH_REPLICAS: replicas,
  /** The processes' own; the launcher's lines are always printed. */
  LOG_LEVEL: env.logLevel().default('warn'),
  WEBHOOK_SECRET_KEY: env.aesKey().optional(),
  TOOL_SECRET_KEY: env.aesKey().optional(),
  JWT_KEY_ENCRYPTION_KEY: env.aesKey().optional(),
});

export type MeshConfig = z.output<typeof schema>;

export function loadMeshConfig(source: Record<string, string | undefined> = process.env): MeshConfig {
  return parseConfig(schema, source);
}
