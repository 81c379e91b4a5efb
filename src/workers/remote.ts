import { proxy, type Remote, wrap } from 'comlink';
import { StemflowError } from '../errors';
import type { AcquisitionApi, LoadProgress, TcbfStage } from './acquisition-api';

/** The running worker, its comlink remote and a promise that rejects when it dies. */
interface LiveWorker {
  worker: Worker;
  remote: Remote<AcquisitionApi>;
  failure: Promise<never>;
  fail(error: Error): void;
}

let live: LiveWorker | null = null;
let client: AcquisitionApi | null = null;
/** Settings a new worker must receive again after a restart. */
let backend: 'auto' | 'cpu' | null = null;
let budget: number | null = null;
const lostListeners = new Set<(message: string) => void>();

/** Starts the acquisition worker (on first use, and again after one died), replaying the settings. */
function start(): LiveWorker {
  const worker = new Worker(new URL('./acquisition-worker.ts', import.meta.url), {
    type: 'module',
    name: 'acquisition',
  });
  let fail: (error: Error) => void = () => {};
  const failure = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failure.catch(() => {});
  const started: LiveWorker = { worker, remote: wrap<AcquisitionApi>(worker), failure, fail };
  // comlink never settles a call to a worker that failed (a script that did not load, an uncaught error):
  // the failure promise rejects then, and every call races against it.
  worker.addEventListener('error', (event) => {
    lose(started, `The acquisition worker stopped${event.message ? `: ${event.message}` : ''}.`);
  });
  live = started;
  if (backend) void started.remote.setBackend(backend).catch(() => {});
  if (budget !== null) void started.remote.setMemoryBudget(budget).catch(() => {});
  return started;
}

/** Ends a dead worker: pending calls reject with `message`, listeners hear it, the next call starts anew. */
function lose(worker: LiveWorker, message: string) {
  if (live !== worker) return;
  live = null;
  worker.worker.terminate();
  worker.fail(new StemflowError('aborted', `${message} A new worker was started; open the files again.`));
  for (const listener of lostListeners) listener(message);
}

/** Calls the live worker (starting one if needed); rejects instead of hanging if the worker dies. */
function call<T>(fn: (remote: Remote<AcquisitionApi>) => Promise<T>): Promise<T> {
  const worker = live ?? start();
  return Promise.race([fn(worker.remote), worker.failure]);
}

/** Hears that the worker died (it is restarted at the next call; what it held is gone). */
export function onWorkerLost(listener: (message: string) => void): () => void {
  lostListeners.add(listener);
  return () => lostListeners.delete(listener);
}

/** Test hook (issue 8): ends the worker as a crash would. */
export function stopWorker(reason = 'The acquisition worker was stopped.'): void {
  if (live) lose(live, reason);
}

/**
 * The worker as a plain AcquisitionApi: progress callbacks cross the thread as comlink proxies, a worker that
 * died turns every pending call into a rejection instead of a promise that never settles, and the next call
 * starts a fresh worker.
 */
export function acquisitionClient(): AcquisitionApi {
  if (client) return client;
  client = {
    open: (files, scan, dataset) => call((r) => r.open(files, scan, dataset)),
    load: (onProgress) =>
      call((r) => r.load(onProgress ? proxy((p: LoadProgress) => onProgress(p)) : undefined)),
    pixelMask: () => call((r) => r.pixelMask()),
    frame: (index) => call<Uint8Array | Uint16Array | Uint32Array>((r) => r.frame(index)),
    virtualImage: (mask) => call((r) => r.virtualImage(mask)),
    setBackend: (preference) => {
      backend = preference;
      return call((r) => r.setBackend(preference));
    },
    cancel: () => call((r) => r.cancel()),
    com: (mask, centre) => call((r) => r.com(mask, centre)),
    regionSum: (region) => call((r) => r.regionSum(region)),
    setMemoryBudget: (bytes) => {
      budget = bytes;
      return call((r) => r.setMemoryBudget(bytes));
    },
    injectFault: (fault) => call((r) => r.injectFault(fault)),
    gpuMemory: () => call((r) => r.gpuMemory()),
    close: () => call((r) => r.close()),
    tcbf: (request, onProgress) =>
      call((r) =>
        (r as unknown as Remote<Required<AcquisitionApi>>).tcbf(
          request,
          onProgress ? proxy((stage: TcbfStage) => onProgress(stage)) : undefined,
        ),
      ),
    cancelTcbf: () => call((r) => (r as unknown as Remote<Required<AcquisitionApi>>).cancelTcbf()),
  };
  return client;
}
