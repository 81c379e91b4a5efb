/// <reference lib="webworker" />
/**
 * One thread of the browser's SHA-256 pool (browser-hash-pool.ts): hashes a Blob (a File of an archive) with
 * sha256OfBlob (blob-sha256.ts), reporting the bytes done after each slice.
 */
import { sha256OfBlob } from './blob-sha256';

self.onmessage = async (event: MessageEvent<{ id: number; blob: Blob }>) => {
  const { id, blob } = event.data;
  try {
    const digest = await sha256OfBlob(blob, (bytes) => postMessage({ id, bytes }));
    postMessage({ id, digest });
  } catch (error) {
    postMessage({ id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
};
