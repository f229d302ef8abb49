import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.js';

/** A write whose batches the test releases one at a time. */
function gatedWrite() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const write = async (items: readonly number[]) => {
    batches.push([...items]);
    await new Promise<void>((resolve) => gates.push(resolve));
    return items.map((item) => item * 10);
  };
  return { batches, write, release: () => gates.shift()?.() };
}

describe('Batcher', () => {
  it('writes a lone item at once, and what arrives meanwhile together in the next batch', async () => {
    const { batches, write, release } = gatedWrite();
    const batcher = new Batcher(write, { maxBatch: 10 });
    const first = batcher.submit(1);
    const rest = [2, 3, 4].map((item) => batcher.submit(item));
    expect(batches).toEqual([[1]]);
    release();
    expect(await first).toBe(10);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    release();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it('never writes more than maxBatch items at once', async () => {
    const { batches, write, release } = gatedWrite();
    const batcher = new Batcher(write, { maxBatch: 2 });
    const all = [1, 2, 3, 4, 5].map((item) => batcher.submit(item));
    for (let n = 0; n < 4; n += 1) {
      release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('rejects every item of a failed batch and goes on with the next', async () => {
    let calls = 0;
    const batcher = new Batcher((items: readonly number[]) => {
      calls += 1;
      return calls === 1 ? Promise.reject(new Error('database away')) : Promise.resolve(items.map(String));
    }, { maxBatch: 10 });
    await expect(batcher.submit(1)).rejects.toThrow('database away');
    expect(await batcher.submit(2)).toBe('2');
  });

  it('refuses an answer of the wrong length', async () => {
    const batcher = new Batcher(() => Promise.resolve([]), { maxBatch: 10 });
    await expect(batcher.submit(1)).rejects.toThrow('answered with 0 outputs');
  });
});
