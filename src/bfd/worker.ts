/**
 * The BFD worker thread: its own event loop, its own sockets and timers, so
 * that a pause of the main thread (a full-table UPDATE burst, a major GC)
 * does not delay our packets and bring sessions down for nothing. It tells
 * the main thread only what changed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BfdHost } from './host.js';
import type { BfdWorkerData, ToWorker } from './protocol.js';

const port = parentPort;
if (port) {
  const data = (workerData ?? {}) as BfdWorkerData;
  const host = new BfdHost(data, (m) => port.postMessage(m));
  port.on('message', (m: ToWorker) => host.handle(m));
  void host.start();
}
