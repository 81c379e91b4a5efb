import h5wasm from 'h5wasm';
import { blobSource } from '../io/byte-source';
import type { InputFile } from '../source/input-file';
import { failingBlob } from './faults';

let ready: Promise<typeof h5wasm.ready extends Promise<infer M> ? M : never> | null = null;
let mounts = 0;

/** h5wasm in a worker, with its throwing error handler on (without it a failed read returns garbage). */
function h5wasmReady() {
  ready ??= h5wasm.ready.then((module) => {
    module.activate_throwing_error_handler();
    return module;
  });
  return ready;
}

/**
 * An InputFile for a dropped File, inside a worker. h5wasm sees the File through Emscripten's WORKERFS,
 * which reads only the byte ranges the HDF5 library asks for (FileReaderSync on File.slice): a 10 GB file
 * is never loaded whole. With `failReadsAfter`, our own reads fail after that many (fault injection).
 */
export function browserInput(file: File, failReadsAfter: number | null = null): InputFile {
  let dir: string | null = null;
  return {
    name: file.name,
    size: file.size,
    // A test fault (issue 8): chunk reads fail after the first few, as when the file goes away mid-load.
    bytes: blobSource(failReadsAfter === null ? file : failingBlob(file, failReadsAfter), file.name),
    async openMetadata() {
      const module = await h5wasmReady();
      const fs = module.FS as unknown as EmscriptenFs;
      if (dir === null) {
        dir = `/input-${++mounts}`;
        fs.mkdir(dir);
        fs.mount(fs.filesystems.WORKERFS, { files: [file] }, dir);
      }
      const h5 = new h5wasm.File(`${dir}/${file.name}`, 'r');
      return { file: h5, close: () => h5.close() };
    },
    async close() {
      if (dir === null) return;
      const module = await h5wasmReady();
      const fs = module.FS as unknown as EmscriptenFs;
      fs.unmount(dir);
      fs.rmdir(dir);
      dir = null;
    },
  };
}

interface EmscriptenFs {
  mkdir(path: string): void;
  rmdir(path: string): void;
  mount(type: unknown, options: { files: File[] }, mountpoint: string): void;
  unmount(mountpoint: string): void;
  filesystems: { WORKERFS: unknown };
}
