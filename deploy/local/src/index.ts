export { loadLocalConfig, type LocalConfig } from './config.js';
export { startEmbeddedPostgres } from './embedded-postgres.js';
export { processIsAlive } from './postmaster.js';
export { databaseNames, SERVICES, startLocalPlatform, type LocalPlatform, type LocalPlatformOptions, type ServiceName } from './launcher.js';
export { MESH_PARTS, startMesh, type Mesh, type MeshOptions, type MeshPart, type MeshReplica, type MeshSecrets } from './mesh/mesh.js';
