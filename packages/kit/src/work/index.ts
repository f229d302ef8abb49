export { LeasedWorkLoop, type LeasedWorkLoopOptions } from './leased-work-loop.js';
export { Batcher } from './batcher.js';
