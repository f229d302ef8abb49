export { actorOf, platformPrincipal, present, principalOf } from './actor.js';
export { GrpcChannel, type ChannelOptions, type OutgoingCall, type PromiseClient } from './client.js';
export { HealthRegistry, ServingStatus, type HealthStatus } from './health.js';
export { servesAt } from './probe.js';
export { PrincipalKind, type CallHeaders, type Principal } from './metadata.js';
export { GrpcServer, requirePrincipal, type CallContext, type GrpcServerOptions, type Handlers } from './server.js';
export { fromGrpcError, toGrpcStatus } from './status.js';
export { answeredRequestStream, Http2Transport, type CallStream, type ChannelTransport, type InProcessServing, type RequestStream } from './transport.js';
export { callKindOf, type AnyMethod, type CallKind, type CallKindOf, type RequestOf, type ResponseOf, type RpcServiceDefinition } from './types.js';
