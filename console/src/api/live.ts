/**
 * How often the console reads again what is live (an execution, a run, an eval): decisions §15.3
 * polls every 2 s at most, since the free plan's 60 requests a minute allow no faster.
 */
export const LIVE_INTERVAL_MS = 2_000;
