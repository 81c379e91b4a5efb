import { proxy, transfer, wrap } from 'comlink';
import { uniqueBuffers } from './image-spares';
import type { SeriesApi } from './series-api';

let client: SeriesApi | null = null;

/** The series worker of the page, created on first use; a worker that fails rejects every call. */
export function seriesClient(): SeriesApi {
  if (client) return client;
  const worker = new Worker(new URL('./series-worker.ts', import.meta.url), {
    type: 'module',
    name: 'series',
  });
  // A worker that died is ended; its pending calls reject and the next call starts a new one.
  const failure = new Promise<never>((_, reject) => {
    worker.addEventListener('error', (event) => {
      if (client === made) client = null;
      worker.terminate();
      reject(
        new Error(
          `The series worker stopped${event.message ? `: ${event.message}` : ''}. A new one starts at the next action.`,
        ),
      );
    });
  });
  failure.catch(() => {});
  const r = wrap<SeriesApi>(worker);
  const guarded = <T>(p: Promise<T>) => Promise.race([p, failure]);
  const made: SeriesApi = {
    open: (folder, options, onProgress) =>
      guarded(
        r.open(
          folder,
          options,
          onProgress
            ? proxy((p: { stage: string; done: number; total: number }) => onProgress(p))
            : undefined,
        ),
      ),
    reload: (options, onProgress) =>
      guarded(
        r.reload(
          options,
          onProgress
            ? proxy((p: { stage: string; done: number; total: number }) => onProgress(p))
            : undefined,
        ) as ReturnType<SeriesApi['reload']>,
      ),
    // Spare arrays are transferred, not copied: they are detached here once sent.
    images: (mask, order, spare) =>
      guarded(r.images(mask, order, spare?.length ? transfer(spare, uniqueBuffers(spare)) : undefined)),
    rebase: () => guarded(r.rebase()),
    frames: (row, col, order) => guarded(r.frames(row, col, order)),
    sumPatterns: (order) => guarded(r.sumPatterns(order)),
    release: () => guarded(r.release()),
  };
  client = made;
  return made;
}
