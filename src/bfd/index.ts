/**
 * The BFD layer's door: the service the speaker runs and its types. Other
 * layers import only this file (scripts/layers.ts).
 */
export { SLOW_TX_US, type BfdTimers } from './fsm.js';
export { type BfdChange, type BfdDownRecord, type BfdSessionSpec } from './runtime.js';
export { BfdService } from './service.js';
