import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';

/**
 * A client-streaming service for the kit's own tests, written as ts-proto writes the definitions
 * of the platform's protos (`outputServices=grpc-js`), since none of those streams requests for
 * the kit to be tested on. It stands for:
 *
 *   package agentplatform.kittest.v1;
 *   message UploadChunk { bytes data = 1; uint32 index = 2; }
 *   message UploadResult { uint32 size = 1; uint32 chunks = 2; string note = 3; }
 *   service UploadService { rpc Upload(stream UploadChunk) returns (UploadResult); }
 *   service EchoService { rpc Echo(stream UploadChunk) returns (stream UploadChunk); }
 *
 * The messages are real protobuf (@bufbuild/protobuf's wire format, as ts-proto's code uses), so
 * a message that cannot be encoded fails the call as generated code would.
 */

export interface UploadChunk {
  data: Buffer;
  index: number;
}

export interface UploadResult {
  size: number;
  chunks: number;
  /** Whatever a test's handler reports back. */
  note: string;
}

export const UploadChunk = {
  encode(message: UploadChunk): Uint8Array {
    const writer = new BinaryWriter();
    if (message.data.length !== 0) writer.uint32(10).bytes(message.data);
    if (message.index !== 0) writer.uint32(16).uint32(message.index);
    return writer.finish();
  },
  decode(input: Uint8Array): UploadChunk {
    const reader = new BinaryReader(input);
    const message: UploadChunk = { data: Buffer.alloc(0), index: 0 };
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 1) message.data = Buffer.from(reader.bytes());
      else if (field === 2) message.index = reader.uint32();
      else reader.skip(wireType);
    }
    return message;
  },
};

export const UploadResult = {
  encode(message: UploadResult): Uint8Array {
    const writer = new BinaryWriter();
    if (message.size !== 0) writer.uint32(8).uint32(message.size);
    if (message.chunks !== 0) writer.uint32(16).uint32(message.chunks);
    if (message.note !== '') writer.uint32(26).string(message.note);
    return writer.finish();
  },
  decode(input: Uint8Array): UploadResult {
    const reader = new BinaryReader(input);
    const message: UploadResult = { size: 0, chunks: 0, note: '' };
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 1) message.size = reader.uint32();
      else if (field === 2) message.chunks = reader.uint32();
      else if (field === 3) message.note = reader.string();
      else reader.skip(wireType);
    }
    return message;
  },
};

export const UPLOAD_SERVICE = 'agentplatform.kittest.v1.UploadService';

export const UploadServiceService = {
  upload: {
    path: '/agentplatform.kittest.v1.UploadService/Upload' as const,
    requestStream: true as const,
    responseStream: false as const,
    requestSerialize: (value: UploadChunk): Buffer => Buffer.from(UploadChunk.encode(value)),
    requestDeserialize: (value: Buffer): UploadChunk => UploadChunk.decode(value),
    responseSerialize: (value: UploadResult): Buffer => Buffer.from(UploadResult.encode(value)),
    responseDeserialize: (value: Buffer): UploadResult => UploadResult.decode(value),
  },
} as const;

/** Streams both ways, which the kit refuses. */
export const EchoServiceService = {
  echo: {
    path: '/agentplatform.kittest.v1.EchoService/Echo' as const,
    requestStream: true as const,
    responseStream: true as const,
    requestSerialize: (value: UploadChunk): Buffer => Buffer.from(UploadChunk.encode(value)),
    requestDeserialize: (value: Buffer): UploadChunk => UploadChunk.decode(value),
    responseSerialize: (value: UploadChunk): Buffer => Buffer.from(UploadChunk.encode(value)),
    responseDeserialize: (value: Buffer): UploadChunk => UploadChunk.decode(value),
  },
} as const;
