import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { FileDescriptorProtoSchema, MethodOptions_IdempotencyLevel } from '@bufbuild/protobuf/wkt';
import { readFileSync } from 'node:fs';

/**
 * Each serialized google.protobuf.FileDescriptorProto of the FileDescriptorSet that `pnpm generate`
 * has `buf build` write beside src/gen: every .proto file here and the well-known types they import,
 * as buf compiled them (names and imports intact), without source info. Servers describe
 * themselves with them through gRPC server reflection. The file sits at the package root, one
 * level above both src/ and dist/, and is in `files`, so it ships with the compiled package.
 */
export function readFileDescriptorProtos(): Buffer[] {
  const reader = new BinaryReader(readFileSync(new URL('../descriptor-set.binpb', import.meta.url)));
  const files: Buffer[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    // FileDescriptorSet has one field: `repeated FileDescriptorProto file = 1`.
    if (field === 1) files.push(Buffer.from(reader.bytes()));
    else reader.skip(wireType);
  }
  return files;
}

/** A gRPC method as a service config's `methodConfig.name` names it. */
export interface MethodName {
  /** Full service name, e.g. `agentplatform.identity.v1.AuthService`. */
  service: string;
  method: string;
}

/**
 * The methods the .proto files mark safe to call again (`option idempotency_level` NO_SIDE_EFFECTS
 * or IDEMPOTENT): reads, and the few calls whose repeat changes nothing more. A client may retry
 * them on another replica when the one it chose went away; any other call may already have acted.
 */
export function idempotentMethods(): MethodName[] {
  const methods: MethodName[] = [];
  for (const bytes of readFileDescriptorProtos()) {
    const file = fromBinary(FileDescriptorProtoSchema, bytes);
    for (const service of file.service) {
      for (const method of service.method) {
        const level = method.options?.idempotencyLevel ?? MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN;
        if (level !== MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN) methods.push({ service: `${file.package}.${service.name}`, method: method.name });
      }
    }
  }
  return methods;
}
