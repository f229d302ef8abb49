import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import closeWithGrace from 'close-with-grace';
import { useDatabaseServer } from '../databases.js';
import { databaseNames, localKey, SERVICES } from '../launcher.js';
import { loadMeshConfig, type MeshConfig } from './config.js';
import { MESH_PARTS, startMesh, type Mesh } from './mesh.js';

// Every replica drains within its own bound (under 35 s); this is the outer one.
const SHUTDOWN_DELAY_MS = 40_000;

const config = loadConfigOrExit(() => loadMeshConfig());
const logger = createLogger({ service: 'mesh', level: 'info' });

const mesh = await start(config).catch((error: unknown) => {
  process.stderr.write(`The mesh did not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
process.stdout.write(describe(mesh));

closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger }, async ({ signal, err }) => {
  if (err) logger.error({ err }, 'stopping after an error');
  else logger.info({ signal }, 'draining and stopping every replica');
  await mesh.stop();
});

async function start(settings: MeshConfig): Promise<Mesh> {
  const names = databaseNames(settings.DATABASE_NAME_PREFIX);
  const database = await useDatabaseServer(settings.DATABASE_URL, Object.values(names), logger);
  const key = async (given: Buffer | undefined, file: Parameters<typeof localKey>[2]) => (await localKey(settings.DATA_DIR, given, file)).toString('base64');
  // decisions §18.1: the services refuse stand-ins unless told; on a laptop they are told, unless the operator said otherwise.
  const standIns = { ALLOW_OFFLINE_MODEL: process.env.ALLOW_OFFLINE_MODEL ?? 'true', PAYMENT_PROVIDER: process.env.PAYMENT_PROVIDER ?? 'immediate' };
  return startMesh({
    replicas: settings.MESH_REPLICAS,
    databaseUrls: Object.fromEntries(SERVICES.map((service) => [service, database.urlFor(names[service])])) as Record<(typeof SERVICES)[number], string>,
    natsUrl: settings.NATS_URL,
    redisUrl: settings.REDIS_URL,
    port: settings.PORT,
    secrets: {
      jwtKeyEncryptionKey: await key(settings.JWT_KEY_ENCRYPTION_KEY, 'jwt-key-encryption-key'),
      toolSecretKey: await key(settings.TOOL_SECRET_KEY, 'tool-secret-key'),
      webhookSecretKey: await key(settings.WEBHOOK_SECRET_KEY, 'webhook-secret-key'),
    },
    env: { LOG_LEVEL: settings.LOG_LEVEL, ...standIns },
    onLine: (replica, line) => process.stdout.write(`${replica.padEnd(22)}| ${line}\n`),
  });
}

function describe(running: Mesh): string {
  const lines = MESH_PARTS.map((part) => {
    const own = running.replicas.filter((replica) => replica.part === part);
    const where = own.map((replica) => `${replica.part === 'gateway' ? 'http://' : ''}127.0.0.1:${replica.ports.main}`).join(', ');
    return `  ${part.padEnd(20)}${where}`;
  });
  return [
    '',
    `Agent platform mesh running at ${running.url}`,
    `  Console   ${running.url}/console`,
    `  REST API  ${running.url}/api/v1`,
    '  Replicas (gRPC; the gateway HTTP):',
    ...lines,
    `  Metrics   ${running.metricsTargets.join(', ')}`,
    '  Press Ctrl-C to drain and stop.',
    '',
    '',
  ].join('\n');
}
