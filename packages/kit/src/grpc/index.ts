export { actorOf, present } from './actor.js';
export { GrpcChannel, type ChannelOptions, type OutgoingCall, type PromiseClient } from './client.js';
export { HealthRegistry, ServingStatus } from './health.js';
export { PrincipalKind, readPrincipal, writePrincipal, type Principal } from './metadata.js';
export { GrpcServer, requirePrincipal, type CallContext, type GrpcServerOptions, type UnaryHandlers } from './server.js';
export { fromGrpcError, toGrpcStatus } from './status.js';
export type { RequestOf, ResponseOf, UnaryServiceDefinition } from './types.js';
