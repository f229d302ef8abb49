/**
 * `vectors.bin`: one agent's rows (ids, partition labels, usearch keys, vectors), the part of the
 * embedded index that cannot be derived from anything but the database. Layout, little-endian:
 *
 *   "AMVROWS1"                       8 bytes, magic and format version
 *   header length H                  uint32
 *   header                           H bytes of UTF-8 JSON (model, dimensions, owner, ids, …)
 *   zero padding                     to a multiple of 4 bytes
 *   vectors                          count × dimensions float32
 *   CRC-32 of all the above          uint32
 *
 * The checksum is verified before anything is parsed, so a truncated or scribbled file is
 * refused as a whole; the model and dimensions are checked before any vector is used.
 *
 * The header's `labels` were called `types` before end users (decisions §14), and held bare
 * memory types: such a file is read with them as labels, which makes its items shared ones.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import { type ArenaSnapshot } from './vector-arena.js';
import { ROWS_FILE, writeAtomically } from './index-directory.js';

const MAGIC = Buffer.from('AMVROWS1', 'latin1');

const headerSchema = z.object({
  model: z.string(),
  dimensions: z.number().int().positive(),
  tenantId: z.string().min(1),
  agentId: z.string().min(1),
  savedAt: z.iso.datetime(),
  nextKey: z.number().int().nonnegative(),
  ids: z.array(z.string().min(1)),
  labels: z.array(z.string()).optional(),
  types: z.array(z.string()).optional(),
  keys: z.array(z.number().int().nonnegative()),
});

export interface RowsOwner {
  model: string;
  dimensions: number;
}

export interface StoredRows {
  tenantId: string;
  agentId: string;
  savedAt: Date;
  snapshot: ArenaSnapshot;
}

export type RowsReading = { ok: true; rows: StoredRows } | { ok: false; reason: string };

export async function writeRows(
  directory: string,
  owner: RowsOwner & { tenantId: string; agentId: string; savedAt: Date },
  snapshot: ArenaSnapshot,
): Promise<void> {
  const header = Buffer.from(
    JSON.stringify({
      model: owner.model,
      dimensions: owner.dimensions,
      tenantId: owner.tenantId,
      agentId: owner.agentId,
      savedAt: owner.savedAt.toISOString(),
      nextKey: snapshot.nextKey,
      ids: snapshot.ids,
      labels: snapshot.labels,
      keys: snapshot.keys,
    }),
    'utf8',
  );
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  const padding = Buffer.alloc(paddingAfter(MAGIC.length + 4 + header.length));
  const vectors = new Uint8Array(snapshot.vectors.buffer, snapshot.vectors.byteOffset, snapshot.vectors.byteLength);
  const body = [MAGIC, length, header, padding, vectors];
  let checksum = 0;
  for (const part of body) checksum = crc32(part, checksum);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32LE(checksum >>> 0);
  await writeAtomically(join(directory, ROWS_FILE), [...body, trailer]);
}

/** Reads and checks an agent's rows; never throws (a missing file is a reason like any other). */
export async function readRows(directory: string, expected: RowsOwner): Promise<RowsReading> {
  let file: Buffer;
  try {
    file = await readFile(join(directory, ROWS_FILE));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? `no ${ROWS_FILE}` : `unreadable ${ROWS_FILE} (${code ?? 'error'})` };
  }
  try {
    return decode(file, expected);
  } catch (error) {
    return { ok: false, reason: `unreadable ${ROWS_FILE} (${error instanceof Error ? error.message : String(error)})` };
  }
}

function decode(file: Buffer, expected: RowsOwner): RowsReading {
  const fail = (reason: string): RowsReading => ({ ok: false, reason });
  if (file.length < MAGIC.length + 8 || !file.subarray(0, MAGIC.length).equals(MAGIC)) return fail(`${ROWS_FILE} is not a vector rows file`);
  const stored = file.readUInt32LE(file.length - 4);
  if ((crc32(file.subarray(0, file.length - 4)) >>> 0) !== stored) return fail(`${ROWS_FILE} fails its checksum (truncated or damaged)`);
  const headerLength = file.readUInt32LE(MAGIC.length);
  const headerEnd = MAGIC.length + 4 + headerLength;
  if (headerEnd > file.length - 4) return fail(`${ROWS_FILE} header overruns the file`);
  const parsed = headerSchema.safeParse(JSON.parse(file.toString('utf8', MAGIC.length + 4, headerEnd)));
  if (!parsed.success) return fail(`${ROWS_FILE} header is malformed`);
  const header = parsed.data;
  if (header.model !== expected.model || header.dimensions !== expected.dimensions) {
    return fail(`${ROWS_FILE} holds model ${header.model} (${header.dimensions} dimensions), not ${expected.model} (${expected.dimensions})`);
  }
  const labels = header.labels ?? header.types;
  if (!labels) return fail(`${ROWS_FILE} header has no labels`);
  const count = header.ids.length;
  if (labels.length !== count || header.keys.length !== count) return fail(`${ROWS_FILE} header lists disagree`);
  if (new Set(header.ids).size !== count || new Set(header.keys).size !== count) return fail(`${ROWS_FILE} repeats an id or key`);
  const vectorsStart = headerEnd + paddingAfter(headerEnd);
  const vectorBytes = count * header.dimensions * 4;
  if (vectorsStart + vectorBytes + 4 !== file.length) return fail(`${ROWS_FILE} has ${file.length} bytes, expected ${vectorsStart + vectorBytes + 4}`);
  // A copy: the file buffer's offset need not be 4-byte aligned for a Float32Array view.
  const vectors = new Float32Array(file.buffer.slice(file.byteOffset + vectorsStart, file.byteOffset + vectorsStart + vectorBytes));
  return {
    ok: true,
    rows: {
      tenantId: header.tenantId,
      agentId: header.agentId,
      savedAt: new Date(header.savedAt),
      snapshot: { ids: header.ids, labels, keys: header.keys, nextKey: header.nextKey, vectors },
    },
  };
}

function paddingAfter(offset: number): number {
  return (4 - (offset % 4)) % 4;
}
