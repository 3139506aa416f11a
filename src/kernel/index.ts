/**
 * The kernel layer's door: the route diff, rules, metrics and the netlink
 * shell as the speaker, the planner and the agent use them. Other layers
 * import only this file (scripts/layers.ts).
 */
export { type KernelEntry } from './fib-core.js';
export { KernelFib, type KernelFibOptions, type KernelStatus } from './kernel-fib.js';
export { BIRD_INT_MAX, NORMAL_ROUTE_PRIORITY, localPrefForMetric, metricForLocalPref } from './metric.js';
export { type WriterKind } from './route-writer.js';
export { KernelRules, type Compiled, type KernelRule } from './rules.js';
export { type DesiredRoute, type Gateway, type KernelRoute, type LearnedKernelRoute, type NextHop, type Refusal } from './types.js';
