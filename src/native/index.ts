/**
 * The native layer's door: libc through koffi (loaded lazily) and worker-thread
 * starts. Only the shells of session, bfd and kernel import it (scripts/layers.ts).
 */
export { libc, nativeUnavailableReason, type Libc } from './libc.js';
export * from './linux.js';
export { startModuleWorker } from './worker.js';
