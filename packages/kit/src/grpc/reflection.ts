import type { Server } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { readFileDescriptorProtos } from '@agent-platform/proto/descriptor-set';

type PackageDefinition = ConstructorParameters<typeof ReflectionService>[0];

// Read once per process: the all-in-one mode runs every service's server in one.
let descriptors: PackageDefinition | undefined;

/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha), so `grpcurl list` and `describe` work
 * without .proto files. It describes `services` (full names) from the proto package's descriptor
 * set, which `buf build` made of the same files as the generated code.
 *
 * ReflectionService indexes the FileDescriptorProtos attached to a package definition's entries.
 * It gets buf's files as they are rather than a definition from @grpc/proto-loader, which merges
 * the files of one package into one and drops their imports, so clients could not resolve a type
 * from another file (grpc/grpc-node#3034).
 */
export function addReflection(server: Pick<Server, 'addService'>, services: string[]): void {
  descriptors ??= {
    'agentplatform.descriptors': { fileDescriptorProtos: readFileDescriptorProtos() },
  } as unknown as PackageDefinition;
  new ReflectionService(descriptors, { services }).addToServer(server);
}
