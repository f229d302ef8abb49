export { LeasedWorkLoop, type LeasedWorkLoopOptions } from './leased-work-loop.js';
