import { BinaryReader } from '@bufbuild/protobuf/wire';
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
