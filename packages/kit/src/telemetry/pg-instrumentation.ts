import { createNoopMeter, type Meter, type MeterProvider } from '@opentelemetry/api';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { POOL_METRIC_NAMES } from '../db/pool-metrics.js';

/**
 * The pg instrumentation (query spans and `db.client.operation.duration`) without its pool
 * counters: kit's db reports those from each pool when scraped (`POOL_METRIC_NAMES` says why).
 */
export class PgQueryInstrumentation extends PgInstrumentation {
  override setMeterProvider(provider: MeterProvider): void {
    super.setMeterProvider({ getMeter: (...meter) => withoutUpDownCounters(provider.getMeter(...meter), POOL_METRIC_NAMES) });
  }
}

/** `meter`, whose UpDownCounters of the `dropped` names record nothing. */
function withoutUpDownCounters(meter: Meter, dropped: readonly string[]): Meter {
  const noop = createNoopMeter();
  return {
    createGauge: meter.createGauge.bind(meter),
    createHistogram: meter.createHistogram.bind(meter),
    createCounter: meter.createCounter.bind(meter),
    createUpDownCounter: (name, options) => (dropped.includes(name) ? noop : meter).createUpDownCounter(name, options),
    createObservableGauge: meter.createObservableGauge.bind(meter),
    createObservableCounter: meter.createObservableCounter.bind(meter),
    createObservableUpDownCounter: meter.createObservableUpDownCounter.bind(meter),
    addBatchObservableCallback: meter.addBatchObservableCallback.bind(meter),
    removeBatchObservableCallback: meter.removeBatchObservableCallback.bind(meter),
  };
}
