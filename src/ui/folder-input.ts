/**
 * Files from folders: a directory handle (File System Access API), the entries of a dropped folder
 * (`webkitGetAsEntry`), or the flat list of an `<input webkitdirectory>`. Only HDF5-looking names are kept
 * (a folder of raw data usually holds logs and notes too); the rest are counted so the UI can say so.
 */
import { MANIFEST_NAME } from '../archive/manifest';

import { HDF5_NAME } from '../source/hdf5-names';

export { HDF5_NAME };

/** How deep a folder walk goes (a measurement folder is shallow; this bounds a mistaken pick of "/"). */
export const MAX_FOLDER_DEPTH = 4;

export function acquisitionFiles(files: File[]): { files: File[]; skipped: number } {
  const kept = files.filter((f) => HDF5_NAME.test(f.name));
  return { files: kept, skipped: files.length - kept.length };
}

/** The subset of FileSystemDirectoryHandle used here (typed locally: not in every DOM lib). */
export interface DirectoryHandleLike {
  kind: 'directory';
  name: string;
  values(): AsyncIterable<DirectoryHandleLike | FileHandleLike>;
}

export interface FileHandleLike {
  kind: 'file';
  name: string;
  getFile(): Promise<File>;
}

// Paths of files read from folders here (a dropped folder's or a picked handle's files have no
// webkitRelativePath of their own); the first component is the folder's name, as with <input webkitdirectory>.
const paths = new WeakMap<File, string>();

/** A file's path within the folder it came from ('folder/sub/name'), or its bare name. */
export function relativePathOf(file: File): string {
  return (
    paths.get(file) ?? ((file as File & { webkitRelativePath?: string }).webkitRelativePath || file.name)
  );
}

/** Every file under a directory handle, depth-first, up to MAX_FOLDER_DEPTH levels. */
export async function filesFromHandle(
  dir: DirectoryHandleLike,
  depth = 0,
  prefix = `${dir.name}/`,
): Promise<File[]> {
  const out: File[] = [];
  for await (const entry of dir.values()) {
    if (entry.kind === 'file') {
      const file = await entry.getFile();
      paths.set(file, prefix + entry.name);
      out.push(file);
    } else if (depth + 1 < MAX_FOLDER_DEPTH) {
      out.push(...(await filesFromHandle(entry, depth + 1, `${prefix}${entry.name}/`)));
    }
  }
  return out;
}

/** The subset of FileSystemEntry (drag and drop) used here. */
export interface EntryLike {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  file?(success: (f: File) => void, failure: (e: unknown) => void): void;
  createReader?(): {
    readEntries(success: (entries: EntryLike[]) => void, failure: (e: unknown) => void): void;
  };
}

/** Every file under dropped entries (files and folders), depth-first, up to MAX_FOLDER_DEPTH levels. */
export async function filesFromEntries(entries: EntryLike[], depth = 0, prefix = ''): Promise<File[]> {
  const out: File[] = [];
  for (const entry of entries) {
    if (entry.isFile && entry.file) {
      const read = entry.file.bind(entry);
      const file = await new Promise<File>((resolve, reject) => read(resolve, reject));
      if (prefix) paths.set(file, prefix + entry.name);
      out.push(file);
    } else if (entry.isDirectory && entry.createReader && depth < MAX_FOLDER_DEPTH) {
      const reader = entry.createReader();
      // readEntries answers in batches (100 in Chromium) until it returns an empty one.
      for (;;) {
        const batch = await new Promise<EntryLike[]>((resolve, reject) =>
          reader.readEntries(resolve, reject),
        );
        if (batch.length === 0) break;
        out.push(...(await filesFromEntries(batch, depth + 1, `${prefix}${entry.name}/`)));
      }
    }
  }
  return out;
}

/** The File System Access API's folder picker, where the browser has it. */
export function directoryPicker(): (() => Promise<DirectoryHandleLike>) | null {
  const w = globalThis as { showDirectoryPicker?: (o?: object) => Promise<DirectoryHandleLike> };
  return typeof w.showDirectoryPicker === 'function'
    ? () => w.showDirectoryPicker!({ id: 'stemflow-open', mode: 'read' })
    : null;
}

/**
 * Whether files read from one folder are a stemflow archive: the folder holds `manifest.json` at its top
 * (a folder without it holds no published archive).
 */
export function isArchiveFolder(files: File[]): boolean {
  return files.some((f) => {
    const parts = relativePathOf(f).split('/');
    return parts.length === 2 && parts[1] === MANIFEST_NAME;
  });
}
