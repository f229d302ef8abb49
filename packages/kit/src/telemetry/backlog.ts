import { metrics, type BatchObservableCallback, type ObservableGauge } from '@opentelemetry/api';

/** A queue's depth as its owner reads it: what waits for a worker now, and how long the oldest has waited. */
export interface BacklogReading {
  /** Items due now that no worker holds. */
  due: number;
  /** Seconds the oldest of them has been due; 0 when none is. */
  oldestSeconds: number;
}

/**
 * Two gauges for a durable work queue, read at each collection (a scrape): `<name>` (items due) and
 * `<name>.age` (seconds the oldest has waited). The honest signal for scaling the workers (KEDA)
 * and for alerting, where CPU says little (decisions §18.5). A read that fails (the database away)
 * reports nothing for that collection rather than a false zero. Returns what stops observing it.
 */
export function observeBacklog(meterName: string, name: string, description: string, read: () => Promise<BacklogReading>): () => void {
  const meter = metrics.getMeter(meterName);
  const gauges = (instruments[name] ??= {
    due: meter.createObservableGauge(name, { unit: '{item}', description }),
    age: meter.createObservableGauge(`${name}.age`, { unit: 's', description: `How long the oldest of ${name} has been due.` }),
  });
  const callback: BatchObservableCallback = async (result) => {
    const reading = await read().catch(() => undefined);
    if (!reading) return;
    result.observe(gauges.due, reading.due);
    result.observe(gauges.age, reading.oldestSeconds);
  };
  meter.addBatchObservableCallback(callback, [gauges.due, gauges.age]);
  return () => meter.removeBatchObservableCallback(callback, [gauges.due, gauges.age]);
}

/** One pair of instruments per backlog name, however many services of a process observe it. */
const instruments: Record<string, { due: ObservableGauge; age: ObservableGauge }> = {};
