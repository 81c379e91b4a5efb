import { describe, expect, it } from 'vitest';
import { fileListArchiveFiles } from '../archive/browser-folder';
import {
  acquisitionFiles,
  type DirectoryHandleLike,
  type EntryLike,
  type FileHandleLike,
  filesFromEntries,
  filesFromHandle,
  isArchiveFolder,
  relativePathOf,
} from './folder-input';

const file = (name: string) => new File([new Uint8Array([1, 2, 3])], name);

function fileHandle(name: string): FileHandleLike {
  return { kind: 'file', name, getFile: async () => file(name) };
}

function dirHandle(name: string, children: (DirectoryHandleLike | FileHandleLike)[]): DirectoryHandleLike {
  return {
    kind: 'directory',
    name,
    async *values() {
      yield* children;
    },
  };
}

function fileEntry(name: string): EntryLike {
  return { isFile: true, isDirectory: false, name, file: (ok) => ok(file(name)) };
}

/** A folder entry whose reader answers in batches of two, then an empty batch (as browsers do). */
function dirEntry(name: string, children: EntryLike[]): EntryLike {
  return {
    isFile: false,
    isDirectory: true,
    name,
    createReader() {
      let at = 0;
      return {
        readEntries(ok) {
          const batch = children.slice(at, at + 2);
          at += batch.length;
          ok(batch);
        },
      };
    },
  };
}

describe('folder input', () => {
  it('keeps HDF5-looking names and counts the rest', () => {
    const picked = acquisitionFiles(['a_master.h5', 'notes.txt', 'b.HDF5', 'c.nxs', 'log'].map(file));
    expect(picked.files.map((f) => f.name)).toEqual(['a_master.h5', 'b.HDF5', 'c.nxs']);
    expect(picked.skipped).toBe(2);
  });

  it('walks a directory handle depth-first, bounded in depth', async () => {
    const deep = dirHandle('d1', [
      dirHandle('d2', [dirHandle('d3', [dirHandle('d4', [fileHandle('too_deep.h5')])])]),
    ]);
    const root = dirHandle('run', [
      fileHandle('x_master.h5'),
      dirHandle('shards', [fileHandle('x_data_000001.h5'), fileHandle('x_data_000002.h5')]),
      deep,
    ]);
    const names = (await filesFromHandle(root)).map((f) => f.name);
    expect(names).toEqual(['x_master.h5', 'x_data_000001.h5', 'x_data_000002.h5']);
  });

  it('reads dropped folder entries in all their batches', async () => {
    const folder = dirEntry(
      'run',
      ['a_master.h5', 'a_data_000001.h5', 'a_data_000002.h5', 'readme.txt', 'a_data_000003.h5'].map(
        fileEntry,
      ),
    );
    const names = (await filesFromEntries([folder, fileEntry('loose.h5')])).map((f) => f.name);
    expect(names).toEqual([
      'a_master.h5',
      'a_data_000001.h5',
      'a_data_000002.h5',
      'readme.txt',
      'a_data_000003.h5',
      'loose.h5',
    ]);
  });

  it("keeps each file's path in its folder, and knows an archive folder by its top manifest", async () => {
    const archive = dirEntry('archive', [
      fileEntry('manifest.json'),
      fileEntry('state.npz'),
      dirEntry('acq0000', [fileEntry('rec0000.tans')]),
      dirEntry('acq0001', [fileEntry('rec0000.tans')]),
    ]);
    const dropped = await filesFromEntries([archive]);
    const paths = dropped.map(relativePathOf);
    expect(paths).toEqual([
      'archive/manifest.json',
      'archive/state.npz',
      'archive/acq0000/rec0000.tans',
      'archive/acq0001/rec0000.tans',
    ]);
    expect(isArchiveFolder(dropped)).toBe(true);
    // Same names in two acquisitions: the paths tell them apart.
    const files = fileListArchiveFiles(dropped, paths);
    const second = await files.open('acq0001/rec0000.tans');
    expect(second).toBeTruthy();
    await expect(files.open('rec0000.tans')).rejects.toThrow(/not among the chosen files/);

    const picked = await filesFromHandle(
      dirHandle('run', [fileHandle('x_master.h5'), dirHandle('sub', [fileHandle('manifest.json')])]),
    );
    expect(picked.map(relativePathOf)).toEqual(['run/x_master.h5', 'run/sub/manifest.json']);
    // A manifest below the top does not make the folder an archive; loose files are not one either.
    expect(isArchiveFolder(picked)).toBe(false);
    expect(isArchiveFolder([file('manifest.json')])).toBe(false);
  });
});
