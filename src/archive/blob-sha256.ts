/**
 * SHA-256 of a Blob (a File of an archive) with hash-wasm, read in 16 MiB slices: the loop of the browser's hash
 * threads (browser-hash-worker.ts) and of their fallback in the calling worker (browser-folder.ts).
 */
import { createSHA256 } from 'hash-wasm';

const SLICE = 16 << 20;

/** The hex digest; `onBytes` gets the size of each slice once it is hashed. */
export async function sha256OfBlob(blob: Blob, onBytes?: (bytes: number) => void): Promise<string> {
  const h = await createSHA256();
  h.init();
  for (let at = 0; at < blob.size; at += SLICE) {
    const bytes = new Uint8Array(await blob.slice(at, at + SLICE).arrayBuffer());
    h.update(bytes);
    onBytes?.(bytes.length);
  }
  return h.digest('hex');
}
