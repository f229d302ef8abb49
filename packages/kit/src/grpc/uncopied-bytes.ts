import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { AnyMethod, RpcServiceDefinition } from './types.js';

/**
 * Where a serialized message keeps bytes that grpc-js writes after the message's own, uncopied:
 * patches/@grpc__grpc-js@1.14.7.patch frames the message with their length and writes them
 * straight to the HTTP/2 stream. A registry symbol, so that grpc-js finds it without an import.
 */
const TRAILING_BYTES = Symbol.for('agent-platform.grpc.trailingBytes');

type Serialized = Buffer & { [TRAILING_BYTES]?: Uint8Array };

/** A smaller piece is copied as usual: a second write would cost more than the copy. */
const UNCOPIED_MIN_BYTES = 16 * 1024;

/**
 * `definition` with `method`'s requests serialized without copying the bytes of `field`, a
 * `bytes` field numbered `number` in its .proto: the message's other fields are serialized as
 * usual, followed by the field's key and length, and the bytes stay where the caller has them
 * until HTTP/2 has sent them. An upload's pieces otherwise cross the gateway copied twice (into
 * the message, then into its frame): garbage that V8 frees late, which took the gateway's RSS up
 * by ~16 MiB for each copy of a 20 MiB upload (docs/performance.md, "Documents").
 * The field comes last, wherever the .proto puts it; a field of a oneof (which ts-proto writes even
 * when empty) also comes earlier, empty. Protobuf readers accept both and keep the last.
 */
export function sendingBytesUncopied<D extends RpcServiceDefinition>(definition: D, method: keyof D & string, field: { name: string; number: number }): D {
  const codec = definition[method]!;
  const serialize = codec.requestSerialize as (value: Record<string, unknown>) => Buffer;
  const uncopied: AnyMethod = {
    ...codec,
    requestSerialize: ((value: Record<string, unknown>): Buffer => {
      const bytes = value[field.name];
      if (!(bytes instanceof Uint8Array) || bytes.byteLength < UNCOPIED_MIN_BYTES) return serialize(value);
      const others = serialize({ ...value, [field.name]: new Uint8Array(0) });
      const key = new BinaryWriter().tag(field.number, WireType.LengthDelimited).uint32(bytes.byteLength).finish();
      const head: Serialized = Buffer.concat([others, key]);
      head[TRAILING_BYTES] = bytes;
      return head;
    }),
  };
  return { ...definition, [method]: uncopied };
}

/** A message's bytes whole, for a reader that is not grpc-js (the in-process transport): copied. */
export function wholeMessage(serialized: Buffer): Buffer {
  const trailing = (serialized as Serialized)[TRAILING_BYTES];
  return trailing === undefined ? serialized : Buffer.concat([serialized, trailing]);
}
