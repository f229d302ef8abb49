import { describe, expect, it } from 'vitest';
import { compareWithBaseline, describeTargets, type Figure } from './figures.js';

const higher = (value: number): Figure => ({ value, unit: 'req/s', better: 'higher' });
const lower = (value: number): Figure => ({ value, unit: 'ms', better: 'lower' });

describe('compareWithBaseline', () => {
  it('fails a figure that got worse by more than the tolerance, in either direction of better', () => {
    const baseline = { throughput: higher(1000), latency: lower(10) };
    expect(compareWithBaseline(baseline, { throughput: higher(690), latency: lower(10) }).regressions).toEqual(['throughput']);
    expect(compareWithBaseline(baseline, { throughput: higher(1000), latency: lower(14.5) }).regressions).toEqual(['latency']);
  });

  it('passes figures within the tolerance and any improvement', () => {
    const baseline = { throughput: higher(1000), latency: lower(10) };
    const { regressions, lines } = compareWithBaseline(baseline, { throughput: higher(710), latency: lower(4) });
    expect(regressions).toEqual([]);
    expect(lines.join('\n')).toContain('latency: 4.000 ms (baseline 10 ms, +150%)');
  });

  it('reports figures new or missing without failing on them', () => {
    const { regressions, lines } = compareWithBaseline({ gone: higher(1) }, { fresh: higher(1) });
    expect(regressions).toEqual([]);
    expect(lines).toEqual(['  new       fresh: 1.000 req/s', '  missing   gone']);
  });
});

describe('describeTargets', () => {
  it('puts each target beside its figure and says whether it was met, in either direction of better', () => {
    const lines = describeTargets({
      throughput: { ...higher(1600), target: 1500 },
      latency: { ...lower(24), target: 20 },
      untargeted: higher(5),
    });
    expect(lines).toEqual(['  met     throughput: 1600 req/s (target ≥ 1500 req/s)', '  NOT MET latency: 24 ms (target ≤ 20 ms)']);
  });
});
