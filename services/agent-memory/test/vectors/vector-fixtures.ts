/** Vectors, ids and a stand-in database for the VectorStore tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '@agent-platform/kit';
import { cosine, normalised } from '../../src/models/embedder.js';
import { type VectorRecord, type VectorSource, type VectorStoreLogger } from '../../src/vectors/vector-store.js';

/** A seeded generator, so a failing case can be replayed. */
export { seededRandom } from '@agent-platform/kit/testing';

/** A direction drawn uniformly on the unit sphere. */
export function randomUnit(random: () => number, dimensions: number): Float32Array {
  const values = new Float64Array(dimensions);
  for (let index = 0; index < dimensions; index += 1) {
    const u = random() || Number.MIN_VALUE;
    values[index] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  }
  return unit(values);
}

/** The unit vector of a weighted sum of axes: `mix(8, [0, 1], [1, 1])` is (e0 + e1)/√2. */
export function mix(dimensions: number, axes: readonly number[], weights: readonly number[] = axes.map(() => 1)): Float32Array {
  const values = new Float64Array(dimensions);
  axes.forEach((axis, index) => (values[axis] = (values[axis] ?? 0) + (weights[index] ?? 1)));
  return unit(values);
}

export function unit(values: ArrayLike<number>): Float32Array {
  const vector = normalised(values);
  if (!vector) throw new Error('no direction');
  return vector;
}

export interface Owner {
  tenantId: string;
  agentId: string;
}

export function newOwner(): Owner {
  return { tenantId: newId('tenant'), agentId: newId('agent') };
}

/** A shared item (no end user) of `owner`. */
export function record(owner: Owner, vector: Float32Array, memoryType = 'semantic', id = newId('memoryItem')): VectorRecord {
  return { id, tenantId: owner.tenantId, agentId: owner.agentId, memoryType, userId: null, vector };
}

/** An item of `owner` that belongs to the end user `userId`. */
export function userRecord(owner: Owner, userId: string, vector: Float32Array, memoryType = 'semantic'): VectorRecord {
  return { ...record(owner, vector, memoryType), userId };
}

/** The exact top `limit` of `records` for `query`, by cosine: what every index must approximate. */
export function bruteForce(records: readonly VectorRecord[], query: Float32Array, limit: number): { id: string; score: number }[] {
  return records
    .map((candidate) => ({ id: candidate.id, score: cosine(query, candidate.vector) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

/**
 * The database as the index sees it: a map of rows, counting what the store fetches. Held to the
 * real source (vectorSource over PostgreSQL) by vector-source.contract.test.ts.
 */
export class FakeDatabase implements VectorSource {
  /** `reembeddedAt`: when a put last replaced the row's vector (null until one does). */
  readonly rows = new Map<string, VectorRecord & { reembeddedAt: Date | null }>();
  fetched = 0;

  constructor(private readonly options: { tracksChanges?: boolean } = {}) {
    if (options.tracksChanges !== true) this.changedSince = undefined;
  }

  /** Stores the records; one of an id already held is re-embedded in place. */
  put(...records: VectorRecord[]): void {
    for (const row of records) this.rows.set(row.id, { ...row, reembeddedAt: this.rows.has(row.id) ? new Date() : null });
  }

  remove(...ids: string[]): void {
    for (const id of ids) this.rows.delete(id);
  }

  ids(): Promise<string[]> {
    return Promise.resolve([...this.rows.keys()]);
  }

  records(ids: readonly string[]): Promise<VectorRecord[]> {
    const found = [...new Set(ids)].flatMap((id) => {
      const row = this.rows.get(id);
      return row ? [{ id: row.id, tenantId: row.tenantId, agentId: row.agentId, memoryType: row.memoryType, userId: row.userId, vector: row.vector }] : [];
    });
    this.fetched += found.length;
    return Promise.resolve(found);
  }

  changedSince?: (since: Date) => Promise<string[]> = (since) =>
    Promise.resolve([...this.rows.values()].filter((row) => row.reembeddedAt !== null && row.reembeddedAt >= since).map((row) => row.id));
}

/** A logger that keeps the message of every line. */
export function recordingLogger(): { logger: VectorStoreLogger; infos: string[]; warnings: string[] } {
  const infos: string[] = [];
  const warnings: string[] = [];
  const messageOf = (args: unknown[]): string => String(args.findLast((arg) => typeof arg === 'string') ?? '');
  const logger: VectorStoreLogger = {
    info: (...args: unknown[]) => void infos.push(messageOf(args)),
    warn: (...args: unknown[]) => void warnings.push(messageOf(args)),
  };
  return { logger, infos, warnings };
}

export async function temporaryDirectory(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'agent-memory-vectors-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
