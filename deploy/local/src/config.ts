import { z } from 'zod';
import { env, parseConfig } from '@agent-platform/kit';

/** The launcher's own settings; each service still reads its own variables (WELCOME_CREDITS, …). */
const schema = z.object({
  DATA_DIR: z.string().min(1).default('./.data'),
  PORT: env.port(8080),
  EMBEDDED_PG_PORT: env.port(54329),
  /** Use this PostgreSQL server instead of the embedded one (databases are created on it). */
  DATABASE_URL: z.url().optional(),
  IDENTITY_GRPC_PORT: env.port(50051),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  LOG_LEVEL: env.logLevel(),
});

export type LocalConfig = z.output<typeof schema>;

export function loadLocalConfig(source: Record<string, string | undefined> = process.env): LocalConfig {
  return parseConfig(schema, source);
}
