import { UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { createFileRegistry, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { credentials, loadPackageDefinition, type ClientDuplexStream, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { GrpcServer } from './server.js';

interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

// The client side of grpc.reflection.v1 from the .proto file @grpc/reflection ships, as grpcurl has it.
const reflectionProto = createRequire(import.meta.url).resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');
const { grpc } = loadPackageDefinition(loadSync(reflectionProto, { oneofs: true })) as { grpc: GrpcObject };
const ServerReflection = ((grpc.reflection as GrpcObject).v1 as GrpcObject).ServerReflection as ServiceClientConstructor;

const server = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) }).add('agentplatform.identity.v1.UserService', UserServiceService, {
  getCurrentUser: () => Promise.reject(new Error('not called')),
});
let client: InstanceType<ServiceClientConstructor>;

beforeAll(async () => {
  client = new ServerReflection(`127.0.0.1:${await server.listen('127.0.0.1', 0)}`, credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await server.stop(1_000);
});

/** One request on the ServerReflectionInfo stream, as `grpcurl list` and `describe` send it. */
function ask(request: object): Promise<ReflectionResponse> {
  const stream = (client.ServerReflectionInfo as () => ClientDuplexStream<object, ReflectionResponse>)();
  return new Promise((resolve, reject) => {
    stream.once('data', (response: ReflectionResponse) => {
      stream.end();
      resolve(response);
    });
    stream.once('error', reject);
    stream.write(request);
  });
}

describe('server reflection on a network GrpcServer', () => {
  it('lists the services it serves and health', async () => {
    const response = await ask({ listServices: '*' });
    expect(response.listServicesResponse?.service.map((s) => s.name).sort()).toEqual(['agentplatform.identity.v1.UserService', 'grpc.health.v1.Health']);
  });

  it('describes a service with every file its types come from, as grpcurl links them', async () => {
    const response = await ask({ fileContainingSymbol: 'agentplatform.identity.v1.UserService' });
    expect(response.errorResponse).toBeUndefined();
    const files = (response.fileDescriptorResponse?.fileDescriptorProto ?? []).map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
    const [service, ...imports] = files;
    expect(service?.name).toBe('agentplatform/identity/v1/users.proto');
    // Linking throws when an imported file is not in the answer or a type cannot be resolved.
    const registry = createFileRegistry(service!, (name) => imports.find((file) => file.name === name));
    const method = registry.getService('agentplatform.identity.v1.UserService')?.method.getCurrentUser;
    expect(method?.output.field.createdAt?.message?.typeName).toBe('google.protobuf.Timestamp');
  });

  it('describes health as grpc-health-check serves it, and finds a file by its name', async () => {
    const health = await ask({ fileContainingSymbol: 'grpc.health.v1.Health' });
    const [file] = (health.fileDescriptorResponse?.fileDescriptorProto ?? []).map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
    expect(file?.service[0]?.method.map((m) => m.name)).toEqual(['Check', 'Watch', 'List']);
    const timestamp = await ask({ fileByFilename: 'google/protobuf/timestamp.proto' });
    expect(timestamp.errorResponse).toBeUndefined();
    expect(timestamp.fileDescriptorResponse?.fileDescriptorProto).toHaveLength(1);
  });
});
