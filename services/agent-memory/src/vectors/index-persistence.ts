/**
 * The embedded index's files: loading every agent at open, and saving agents in the background.
 * All disk work runs through one queue, one job at a time, so a save and a deletion of the same
 * agent never interleave. Saving rows is cheap and asynchronous and happens after
 * `saveAfterChanges` writes or on a timer; saving a graph is a synchronous native write (about a
 * quarter of a second at 100k vectors), so graphs are saved only at close, finished or not: a
 * graph is saved with the keys it holds, and whatever it lacks (rows written since, or never
 * reached by a build cut short) is queued at the next open. One never saved is rebuilt from the rows.
 */
import { mkdir } from 'node:fs/promises';
import { type AgentVectorIndex } from './agent-vector-index.js';
import { readGraph, removeGraph, writeGraph } from './graph-file.js';
import { agentDirectory, describeError, listAgentDirectories, removeDirectory, removeTemporaryFiles } from './index-directory.js';
import { readRows, writeRows } from './rows-file.js';
import { VectorArena } from './vector-arena.js';
import { type VectorStoreLogger } from './vector-store.js';

export interface PersistenceSettings {
  directory: string;
  model: string;
  dimensions: number;
  exactSearchMaxVectors: number;
  logger: VectorStoreLogger | undefined;
}

export interface LoadedIndexes {
  agents: AgentVectorIndex[];
  /** One line per agent directory that could not be used (and was removed). */
  problems: string[];
}

export class IndexPersistence {
  private tail: Promise<void> = Promise.resolve();
  private readonly queued = new Set<AgentVectorIndex>();

  constructor(private readonly settings: PersistenceSettings) {}

  /** Reads every agent directory; unusable ones are removed and reported, never thrown. */
  async loadAll(makeIndex: (tenantId: string, agentId: string, arena: VectorArena) => AgentVectorIndex): Promise<LoadedIndexes> {
    const { directory, model, dimensions } = this.settings;
    await mkdir(directory, { recursive: true });
    const agents: AgentVectorIndex[] = [];
    const problems: string[] = [];
    for (const path of await listAgentDirectories(directory)) {
      await removeTemporaryFiles(path);
      const reading = await readRows(path, { model, dimensions });
      if (reading.ok && agentDirectory(directory, reading.rows.tenantId, reading.rows.agentId) !== path) {
        problems.push(`${path}: holds the rows of another agent`);
        await removeDirectory(path);
        continue;
      }
      if (!reading.ok) {
        problems.push(`${path}: ${reading.reason}`);
        await removeDirectory(path);
        continue;
      }
      const { rows } = reading;
      const index = makeIndex(rows.tenantId, rows.agentId, VectorArena.restore(dimensions, rows.snapshot));
      index.savedAt = rows.savedAt;
      if (index.size > this.settings.exactSearchMaxVectors) {
        const graph = index.createGraph();
        const graphReading = await readGraph(path, { model, dimensions }, graph);
        if (graphReading.ok) index.adoptGraph(graph, graphReading.keys);
        else if (graphReading.reason !== 'no saved graph') problems.push(`${path}: ${graphReading.reason} (rebuilt from the rows)`);
      }
      index.fitGraph();
      agents.push(index);
    }
    return { agents, problems };
  }

  /** Queues a save of `index`'s rows (once, however often it is asked before the save runs). */
  scheduleSave(index: AgentVectorIndex): void {
    if (this.queued.has(index)) return;
    this.queued.add(index);
    this.enqueue(`save ${index.tenantId}/${index.agentId}`, async () => {
      this.queued.delete(index);
      await this.save(index, false);
    });
  }

  /** Queues the removal of an agent's files. */
  scheduleRemoval(tenantId: string, agentId: string): void {
    this.enqueue(`remove ${tenantId}/${agentId}`, () => removeDirectory(agentDirectory(this.settings.directory, tenantId, agentId)));
  }

  /** Saves every index with unsaved rows or graph, graphs included, after the queued jobs. */
  async flush(indexes: Iterable<AgentVectorIndex>): Promise<void> {
    for (const index of indexes) {
      if (index.changesSinceSave === 0 && index.graph?.changed !== true) continue;
      this.queued.delete(index);
      this.enqueue(`save ${index.tenantId}/${index.agentId}`, () => this.save(index, true));
    }
    await this.tail;
  }

  private async save(index: AgentVectorIndex, withGraph: boolean): Promise<void> {
    if (index.retired) return;
    const { directory: root, model, dimensions } = this.settings;
    const directory = agentDirectory(root, index.tenantId, index.agentId);
    const changes = index.changesSinceSave;
    if (index.size === 0) {
      await removeDirectory(directory);
      index.changesSinceSave -= changes;
      return;
    }
    const savedAt = new Date();
    const snapshot = index.arena.snapshot();
    await mkdir(directory, { recursive: true });
    await writeRows(directory, { model, dimensions, tenantId: index.tenantId, agentId: index.agentId, savedAt }, snapshot);
    index.changesSinceSave -= changes;
    index.savedAt = savedAt;
    if (!withGraph || index.retired) return;
    const graph = index.graph;
    // The graph's keys are read in the same turn as it is written, so they describe it exactly.
    if (graph?.changed) await writeGraph(directory, { model, dimensions }, graph, graph.heldKeys(index.arena.liveKeys()));
    else if (!graph) await removeGraph(directory);
  }

  private enqueue(what: string, job: () => Promise<void>): void {
    this.tail = this.tail.then(job).catch((error: unknown) => {
      this.settings.logger?.warn({ err: error, directory: this.settings.directory }, `vector index: could not ${what}: ${describeError(error)}`);
    });
  }
}
