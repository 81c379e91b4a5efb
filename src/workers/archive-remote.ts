import { proxy, wrap } from 'comlink';
import type { ArchiveApi, ArchiveProgress } from './archive-api';

let client: ArchiveApi | null = null;

/** The archive worker of the page (created on first use), with progress callbacks proxied across the thread. */
export function archiveClient(): ArchiveApi {
  if (client) return client;
  const worker = new Worker(new URL('./archive-worker.ts', import.meta.url), {
    type: 'module',
    name: 'archive',
  });
  // A worker that died is ended; its pending calls reject and the next call starts a new one.
  const failure = new Promise<never>((_, reject) => {
    worker.addEventListener('error', (event) => {
      if (client === made) client = null;
      worker.terminate();
      reject(
        new Error(
          `The archive worker stopped${event.message ? `: ${event.message}` : ''}. A new one starts at the next action.`,
        ),
      );
    });
  });
  failure.catch(() => {});
  const r = wrap<ArchiveApi>(worker);
  const guarded = <T>(p: Promise<T>) => Promise.race([p, failure]);
  const progress = (f?: (p: ArchiveProgress) => void) =>
    f ? proxy((p: ArchiveProgress) => f(p)) : undefined;
  const made: ArchiveApi = {
    convert: (s, folder, onProgress) => guarded(r.convert(s, folder, progress(onProgress))),
    verify: (folder, s, onProgress) => guarded(r.verify(folder, s, progress(onProgress))),
    cancel: () => guarded(r.cancel()),
  };
  client = made;
  return made;
}
