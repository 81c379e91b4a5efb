/// <reference lib="webworker" />
/**
 * One thread of the browser's SHA-256 pool (browser-hash-pool.ts): hashes a Blob (a File of an archive) in
 * 16 MiB slices with hash-wasm, reporting the bytes done after each slice.
 */
import { createSHA256 } from 'hash-wasm';

const SLICE = 16 << 20;

self.onmessage = async (event: MessageEvent<{ id: number; blob: Blob }>) => {
  const { id, blob } = event.data;
  try {
    const h = await createSHA256();
    h.init();
    for (let at = 0; at < blob.size; at += SLICE) {
      const bytes = new Uint8Array(await blob.slice(at, at + SLICE).arrayBuffer());
      h.update(bytes);
      postMessage({ id, bytes: bytes.length });
    }
    postMessage({ id, digest: h.digest('hex') });
  } catch (error) {
    postMessage({ id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
};
