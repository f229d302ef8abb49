/**
 * `graph.usearch` + `graph.json`: a saved HNSW graph, so a restart does not rebuild it (minutes at
 * 100k vectors). The graph is a cache of the rows: `graph.json` records the keys it held, its
 * size and CRC-32, and the model, dimensions, connectivity and precision it was built with. A graph that does
 * not match is ignored (the rows rebuild it); one that matches but is older than the rows is
 * patched by key difference, which is exact because a key names one vector version.
 *
 * The checksum is not optional: usearch aborts the whole process (an uncaught C++ `bad_alloc`)
 * on some garbage files instead of throwing, so no byte reaches `Index.load` unverified.
 */
import { readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { GRAPH_QUANTIZATION, type HnswGraph } from './hnsw-graph.js';
import { fileChecksum, GRAPH_FILE, GRAPH_META_FILE, temporaryPath, writeAtomically } from './index-directory.js';

const metaSchema = z.object({
  model: z.string(),
  dimensions: z.number().int().positive(),
  connectivity: z.number().int().positive(),
  // Absent from files written before graphs were kept in half precision (they were f32).
  quantization: z.string().default('f32'),
  bytes: z.number().int().nonnegative(),
  crc32: z.number().int().nonnegative(),
  keys: z.array(z.number().int().nonnegative()),
});

export interface GraphOwner {
  model: string;
  dimensions: number;
}

/** Saves the graph (synchronous native write, then renamed into place) and its description. */
export async function writeGraph(directory: string, owner: GraphOwner, graph: HnswGraph, keys: readonly number[]): Promise<void> {
  const target = join(directory, GRAPH_FILE);
  const temporary = temporaryPath(target);
  try {
    graph.save(temporary);
    const { crc32, bytes } = await fileChecksum(temporary);
    const meta = { model: owner.model, dimensions: owner.dimensions, connectivity: graph.params.connectivity, quantization: GRAPH_QUANTIZATION, bytes, crc32, keys };
    // Graph first, description second: a crash between the two leaves a description whose
    // checksum does not match, and the graph is rebuilt rather than trusted.
    await rename(temporary, target);
    await writeAtomically(join(directory, GRAPH_META_FILE), [Buffer.from(JSON.stringify(meta), 'utf8')]);
  } catch (error) {
    graph.changed = true;
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Loads the saved graph of `directory` into `graph` (a fresh one); returns the keys it holds, or
 * a reason it cannot be used. Never throws.
 */
export async function readGraph(
  directory: string,
  owner: GraphOwner,
  graph: HnswGraph,
): Promise<{ ok: true; keys: number[] } | { ok: false; reason: string }> {
  try {
    const parsed = metaSchema.safeParse(JSON.parse(await readFile(join(directory, GRAPH_META_FILE), 'utf8')));
    if (!parsed.success) return { ok: false, reason: `${GRAPH_META_FILE} is malformed` };
    const meta = parsed.data;
    if (meta.model !== owner.model || meta.dimensions !== owner.dimensions || meta.connectivity !== graph.params.connectivity || meta.quantization !== String(GRAPH_QUANTIZATION)) {
      return { ok: false, reason: `${GRAPH_FILE} was built for another model, dimension, connectivity or precision` };
    }
    const path = join(directory, GRAPH_FILE);
    const actual = await fileChecksum(path);
    if (actual.bytes !== meta.bytes || actual.crc32 !== meta.crc32) return { ok: false, reason: `${GRAPH_FILE} fails its checksum` };
    if (!graph.load(path, meta.keys.length)) return { ok: false, reason: `${GRAPH_FILE} does not hold the graph its description lists` };
    return { ok: true, keys: meta.keys };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'no saved graph' };
    return { ok: false, reason: `unreadable graph (${error instanceof Error ? error.message : String(error)})` };
  }
}

export async function removeGraph(directory: string): Promise<void> {
  await rm(join(directory, GRAPH_META_FILE), { force: true });
  await rm(join(directory, GRAPH_FILE), { force: true });
}
