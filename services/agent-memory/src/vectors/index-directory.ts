/**
 * Where and how the embedded index keeps its files: `<directory>/<tenant>/<agent>/` per agent,
 * each file replaced atomically (written beside it under a temporary name, flushed, renamed over
 * it), so a crash leaves either the old file or the new one, never half of one. Leftover
 * temporary files of a crash are removed at open.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

export const ROWS_FILE = 'vectors.bin';
export const GRAPH_FILE = 'graph.usearch';
export const GRAPH_META_FILE = 'graph.json';
const TEMP_MARK = '.tmp-';

const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

/** A directory name for an id: the id itself when harmless, else a digest of it. */
export function pathSegment(id: string): string {
  return SAFE_SEGMENT.test(id) ? id : `~${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

export function agentDirectory(root: string, tenantId: string, agentId: string): string {
  return join(root, pathSegment(tenantId), pathSegment(agentId));
}

export function temporaryPath(path: string): string {
  return `${path}${TEMP_MARK}${process.pid}-${randomUUID().slice(0, 8)}`;
}

/** Writes `parts` to `path` atomically; returns the CRC-32 of what was written. */
export async function writeAtomically(path: string, parts: readonly Uint8Array[]): Promise<number> {
  const temporary = temporaryPath(path);
  let checksum = 0;
  try {
    const handle = await open(temporary, 'w');
    try {
      for (const part of parts) {
        await handle.write(part);
        checksum = crc32(part, checksum);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    return checksum;
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** CRC-32 and length of a file, streamed (graph files run to hundreds of megabytes). */
export async function fileChecksum(path: string): Promise<{ crc32: number; bytes: number }> {
  let checksum = 0;
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * 1024 * 1024 })) {
    const data = chunk as Buffer;
    checksum = crc32(data, checksum);
    bytes += data.length;
  }
  return { crc32: checksum, bytes };
}

/** The agent directories under `root` (two levels: tenant, then agent); [] when there is none. */
export async function listAgentDirectories(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const tenant of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    if (!tenant.isDirectory()) continue;
    const tenantPath = join(root, tenant.name);
    for (const agent of await readdir(tenantPath, { withFileTypes: true })) {
      if (agent.isDirectory()) found.push(join(tenantPath, agent.name));
    }
  }
  return found;
}

/** Deletes temporary files a crash left in an agent directory. */
export async function removeTemporaryFiles(directory: string): Promise<void> {
  for (const name of await readdir(directory)) {
    if (name.includes(TEMP_MARK)) await rm(join(directory, name), { force: true });
  }
}

export async function removeDirectory(directory: string): Promise<void> {
  await rm(directory, { recursive: true, force: true });
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
