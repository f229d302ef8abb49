export { loadLocalConfig, type LocalConfig } from './config.js';
export { processIsAlive, startEmbeddedPostgres } from './embedded-postgres.js';
export { databaseNames, SERVICES, startLocalPlatform, type LocalPlatform, type LocalPlatformOptions, type ServiceName } from './launcher.js';
