/**
 * One agent's vectors, packed densely in one Float32Array (row `slot` holds the vector of
 * `ids[slot]`), so exact search runs over a single contiguous matrix and a snapshot is one copy.
 * Removal moves the last row into the hole to keep the matrix dense.
 *
 * Each row also has a partition label (see partition-labels.ts), opaque here: the arena counts
 * rows per label and gathers the rows of a set of labels, which is all that filtering needs.
 *
 * Every stored vector also has a numeric key for usearch, which only takes integers. A key names
 * one vector *version*: replacing an item's vector gives it a fresh key and keys are never reused,
 * so a graph saved earlier can be patched by comparing key sets alone.
 */
export interface ArenaSnapshot {
  ids: string[];
  labels: string[];
  keys: number[];
  nextKey: number;
  /** `ids.length × dimensions` values, a copy. */
  vectors: Float32Array;
}

export interface PutResult {
  key: number;
  /** The key of the vector this one replaced, if the id was already stored. */
  replacedKey: number | undefined;
}

const INITIAL_ROWS = 64;

export class VectorArena {
  private data: Float32Array;
  private count = 0;
  private ids: string[] = [];
  private labels: string[] = [];
  private keys: number[] = [];
  private readonly slotById = new Map<string, number>();
  private readonly slotByKey = new Map<number, number>();
  private readonly labelCounts = new Map<string, number>();
  private nextKey = 1;

  constructor(readonly dimensions: number) {
    this.data = new Float32Array(INITIAL_ROWS * dimensions);
  }

  static restore(dimensions: number, snapshot: ArenaSnapshot): VectorArena {
    const arena = new VectorArena(dimensions);
    const rows = snapshot.ids.length;
    arena.data = new Float32Array(Math.max(INITIAL_ROWS, rows) * dimensions);
    arena.data.set(snapshot.vectors.subarray(0, rows * dimensions));
    arena.count = rows;
    arena.ids = snapshot.ids.slice();
    arena.labels = snapshot.labels.slice();
    arena.keys = snapshot.keys.slice();
    for (let slot = 0; slot < rows; slot += 1) {
      const key = arena.keys[slot] ?? 0;
      arena.slotById.set(arena.ids[slot] ?? '', slot);
      arena.slotByKey.set(key, slot);
      arena.countLabel(arena.labels[slot] ?? '', 1);
    }
    arena.nextKey = snapshot.nextKey;
    for (const key of arena.keys) if (key >= arena.nextKey) arena.nextKey = key + 1;
    return arena;
  }

  get size(): number {
    return this.count;
  }

  has(id: string): boolean {
    return this.slotById.has(id);
  }

  allIds(): string[] {
    return this.ids.slice(0, this.count);
  }

  liveKeys(): number[] {
    return this.keys.slice(0, this.count);
  }

  idOfKey(key: number): string | undefined {
    const slot = this.slotByKey.get(key);
    return slot === undefined ? undefined : this.ids[slot];
  }

  labelOfKey(key: number): string | undefined {
    const slot = this.slotByKey.get(key);
    return slot === undefined ? undefined : this.labels[slot];
  }

  /** Every label some stored row has. */
  storedLabels(): IterableIterator<string> {
    return this.labelCounts.keys();
  }

  /** The stored vector of `key` (a view, valid until the next change), if the key is live. */
  vectorOfKey(key: number): Float32Array | undefined {
    return this.rowAt(this.slotByKey.get(key));
  }

  /** The stored vector of `id` (a view, valid until the next change), if stored. */
  vectorOfId(id: string): Float32Array | undefined {
    return this.rowAt(this.slotById.get(id));
  }

  private rowAt(slot: number | undefined): Float32Array | undefined {
    return slot === undefined ? undefined : this.data.subarray(slot * this.dimensions, (slot + 1) * this.dimensions);
  }

  /** Whether `id` is stored with exactly this label and vector. */
  holds(id: string, label: string, vector: Float32Array): boolean {
    const slot = this.slotById.get(id);
    if (slot === undefined || this.labels[slot] !== label) return false;
    const offset = slot * this.dimensions;
    for (let index = 0; index < this.dimensions; index += 1) if (this.data[offset + index] !== vector[index]) return false;
    return true;
  }

  /** Every row, as one matrix view (valid until the next change). */
  matrix(): Float32Array {
    return this.data.subarray(0, this.count * this.dimensions);
  }

  keyOfSlot(slot: number): number | undefined {
    return slot < this.count ? this.keys[slot] : undefined;
  }

  idOfSlot(slot: number): string | undefined {
    return slot < this.count ? this.ids[slot] : undefined;
  }

  /** How many stored rows have one of `labels`. */
  countOfLabels(labels: ReadonlySet<string>): number {
    let total = 0;
    for (const label of labels) total += this.labelCounts.get(label) ?? 0;
    return total;
  }

  /** The rows whose label is in `labels`, copied into one matrix, with the slot of each row. */
  gather(labels: ReadonlySet<string>): { matrix: Float32Array; slots: number[] } {
    const slots: number[] = [];
    for (let slot = 0; slot < this.count; slot += 1) if (labels.has(this.labels[slot] ?? '')) slots.push(slot);
    return this.rowsOf(slots);
  }

  /** The live rows of `keys` (of `labels`, when given), copied into one matrix, with the slot of each row. */
  gatherKeys(keys: readonly number[], labels: ReadonlySet<string> | undefined): { matrix: Float32Array; slots: number[] } {
    const slots: number[] = [];
    for (const key of keys) {
      const slot = this.slotByKey.get(key);
      if (slot !== undefined && (!labels || labels.has(this.labels[slot] ?? ''))) slots.push(slot);
    }
    return this.rowsOf(slots);
  }

  private rowsOf(slots: number[]): { matrix: Float32Array; slots: number[] } {
    const matrix = new Float32Array(slots.length * this.dimensions);
    slots.forEach((slot, row) => {
      matrix.set(this.data.subarray(slot * this.dimensions, (slot + 1) * this.dimensions), row * this.dimensions);
    });
    return { matrix, slots };
  }

  put(id: string, label: string, vector: Float32Array): PutResult {
    const key = this.nextKey;
    this.nextKey += 1;
    let slot = this.slotById.get(id);
    let replacedKey: number | undefined;
    if (slot === undefined) {
      slot = this.count;
      this.grow(slot + 1);
      this.count += 1;
      this.slotById.set(id, slot);
      this.ids[slot] = id;
    } else {
      replacedKey = this.keys[slot];
      if (replacedKey !== undefined) this.slotByKey.delete(replacedKey);
      this.countLabel(this.labels[slot] ?? '', -1);
    }
    this.labels[slot] = label;
    this.keys[slot] = key;
    this.slotByKey.set(key, slot);
    this.countLabel(label, 1);
    this.data.set(vector, slot * this.dimensions);
    return { key, replacedKey };
  }

  /** Removes `id`; returns the key its vector had, or undefined when it was not stored. */
  remove(id: string): number | undefined {
    const slot = this.slotById.get(id);
    if (slot === undefined) return undefined;
    const key = this.keys[slot] ?? 0;
    const last = this.count - 1;
    this.slotById.delete(id);
    this.slotByKey.delete(key);
    this.countLabel(this.labels[slot] ?? '', -1);
    if (slot !== last) {
      const movedId = this.ids[last] ?? '';
      const movedKey = this.keys[last] ?? 0;
      this.ids[slot] = movedId;
      this.labels[slot] = this.labels[last] ?? '';
      this.keys[slot] = movedKey;
      this.slotById.set(movedId, slot);
      this.slotByKey.set(movedKey, slot);
      this.data.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
    }
    this.ids.length = last;
    this.labels.length = last;
    this.keys.length = last;
    this.count = last;
    return key;
  }

  snapshot(): ArenaSnapshot {
    return {
      ids: this.allIds(),
      labels: this.labels.slice(0, this.count),
      keys: this.liveKeys(),
      nextKey: this.nextKey,
      vectors: this.matrix().slice(),
    };
  }

  private grow(rows: number): void {
    if (rows * this.dimensions <= this.data.length) return;
    const next = new Float32Array(Math.max(rows, (this.data.length / this.dimensions) * 2) * this.dimensions);
    next.set(this.data);
    this.data = next;
  }

  private countLabel(label: string, delta: number): void {
    const count = (this.labelCounts.get(label) ?? 0) + delta;
    if (count > 0) this.labelCounts.set(label, count);
    else this.labelCounts.delete(label);
  }
}
