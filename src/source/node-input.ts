import { resolve } from 'node:path';
import h5wasm from 'h5wasm/node';
import { nodeFileSource } from '../io/node-file-source';
import type { InputFile } from './input-file';

let ready: Promise<void> | null = null;

/** h5wasm for Node, with its throwing error handler on (without it a failed read returns garbage). */
function h5wasmReady(): Promise<void> {
  ready ??= h5wasm.ready.then((module) => {
    module.activate_throwing_error_handler();
  });
  return ready;
}

/** An InputFile for a path on disk (CLI, tests). */
export async function nodeInput(path: string): Promise<InputFile> {
  const bytes = await nodeFileSource(path);
  const absolute = resolve(path);
  return {
    name: bytes.name,
    size: bytes.size,
    bytes,
    async openMetadata() {
      await h5wasmReady();
      const file = new h5wasm.File(absolute, 'r');
      return { file, close: () => file.close() };
    },
    close: () => bytes.close(),
  };
}
