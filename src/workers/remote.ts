import { proxy, type Remote, wrap } from 'comlink';
import type { AcquisitionApi, LoadProgress } from './acquisition-api';

let remote: Remote<AcquisitionApi> | null = null;
let failure: Promise<never> | null = null;
let client: AcquisitionApi | null = null;

/** The one acquisition worker of the page, created on first use. */
export function acquisitionRemote(): Remote<AcquisitionApi> {
  if (remote) return remote;
  const worker = new Worker(new URL('./acquisition-worker.ts', import.meta.url), {
    type: 'module',
    name: 'acquisition',
  });
  // comlink never settles a call to a worker that failed (a script that did not load, an uncaught error);
  // this promise rejects then, and every client call races against it.
  failure = new Promise<never>((_, reject) => {
    worker.addEventListener('error', (event) => {
      const detail = event.message ? `: ${event.message}` : '';
      reject(new Error(`The acquisition worker stopped${detail}. Reload the page to try again.`));
    });
  });
  failure.catch(() => {});
  remote = wrap<AcquisitionApi>(worker);
  return remote;
}

function guarded<T>(call: Promise<T>): Promise<T> {
  return failure ? Promise.race([call, failure]) : call;
}

/**
 * The worker as a plain AcquisitionApi: progress callbacks cross the thread as comlink proxies and a
 * worker that failed to start turns every call into a rejection instead of a promise that never settles.
 */
export function acquisitionClient(): AcquisitionApi {
  if (client) return client;
  const r = acquisitionRemote();
  client = {
    open: (files, scan, dataset) => guarded(r.open(files, scan, dataset)),
    load: (onProgress) => guarded(r.load(onProgress ? proxy((p: LoadProgress) => onProgress(p)) : undefined)),
    pixelMask: () => guarded(r.pixelMask()),
    frame: (index) => guarded<Uint8Array | Uint16Array | Uint32Array>(r.frame(index)),
    virtualImage: (mask) => guarded(r.virtualImage(mask)),
    setBackend: (preference) => guarded(r.setBackend(preference)),
    cancel: () => guarded(r.cancel()),
    com: (mask, centre) => guarded(r.com(mask, centre)),
    regionSum: (region) => guarded(r.regionSum(region)),
    close: () => guarded(r.close()),
  };
  return client;
}
