/**
 * The figures `pnpm bench` measures, for `pnpm bench --check` to hold against
 * test/bench/baseline.json. A bench run in CI would be noise; this is for people, before a release.
 */
export interface Figure {
  value: number;
  unit: string;
  better: 'higher' | 'lower';
  /** What the figure is held to (an issue's goal), when it has one: at least it if higher is better, at most if lower. */
  target?: number;
}

export interface Baseline {
  /** Where and how the baseline was measured: figures from another machine compare loosely at best. */
  machine: { cores: number; node: string; quick: boolean };
  figures: Record<string, Figure>;
}

const recorded = new Map<string, Figure>();

export function recordFigure(name: string, figure: Figure): void {
  recorded.set(name, figure);
}

export function recordedFigures(): Record<string, Figure> {
  return Object.fromEntries(recorded);
}

/** A regression beyond this share of the baseline fails the check. */
export const REGRESSION_TOLERANCE = 0.3;

/**
 * Each measured figure against its baseline: how much worse (negative) or better it is, and the
 * names of those worse by more than `tolerance`. A figure missing on either side is reported, not
 * failed: benches come and go.
 */
export function compareWithBaseline(baseline: Record<string, Figure>, current: Record<string, Figure>, tolerance = REGRESSION_TOLERANCE) {
  const lines: string[] = [];
  const regressions: string[] = [];
  for (const [name, figure] of Object.entries(current)) {
    const base = baseline[name];
    if (!base) {
      lines.push(`  new       ${name}: ${format(figure)}`);
      continue;
    }
    // Positive when better, whichever direction "better" is.
    const change = figure.better === 'higher' ? figure.value / base.value - 1 : base.value / figure.value - 1;
    const worse = figure.better === 'higher' ? figure.value < base.value * (1 - tolerance) : figure.value > base.value / (1 - tolerance);
    if (worse) regressions.push(name);
    lines.push(`  ${worse ? 'REGRESSED' : 'ok       '} ${name}: ${format(figure)} (baseline ${format(base)}, ${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)}%)`);
  }
  for (const name of Object.keys(baseline)) if (!(name in current)) lines.push(`  missing   ${name}`);
  return { lines, regressions };
}

/** Every figure with a target, the target beside it and whether this run met it. */
export function describeTargets(figures: Record<string, Figure>): string[] {
  return Object.entries(figures).flatMap(([name, figure]) => {
    if (figure.target === undefined) return [];
    const met = figure.better === 'higher' ? figure.value >= figure.target : figure.value <= figure.target;
    return [`  ${met ? 'met    ' : 'NOT MET'} ${name}: ${format(figure)} (target ${figure.better === 'higher' ? '≥' : '≤'} ${format({ ...figure, value: figure.target })})`];
  });
}

function format(figure: Figure): string {
  const digits = Math.abs(figure.value) < 10 ? 3 : 0;
  return `${figure.value.toFixed(digits)} ${figure.unit}`;
}
