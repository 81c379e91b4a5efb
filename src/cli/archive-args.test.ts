import { describe, expect, it } from 'vitest';
import { groupAcquisitions } from './archive';

// A fake file system: folders and the names in them.
const folders: Record<string, string[]> = {
  run1: ['scan_master.h5', 'scan_data_000002.h5', 'scan_data_000001.h5', 'notes.txt'],
  '/data/run2/': ['b_master.h5', 'b_data_000001.h5'],
  empty: ['readme.md'],
};
const fs = { isDirectory: (p: string) => p in folders, list: (p: string) => folders[p] };

describe('convert and verify arguments', () => {
  it('groups files by --acquisition, and names a bare group after its first file', () => {
    expect(groupAcquisitions(['a_master.h5', 'a_data_000001.h5', '--acquisition', 'x', 'x.h5'], fs)).toEqual([
      { name: 'a', files: ['a_master.h5', 'a_data_000001.h5'] },
      { name: 'x', files: ['x.h5'] },
    ]);
  });

  it('takes a folder as the acquisition of its HDF5 files (name order), named after the folder', () => {
    expect(groupAcquisitions(['run1', '/data/run2/'], fs)).toEqual([
      {
        name: 'run1',
        files: ['run1/scan_data_000001.h5', 'run1/scan_data_000002.h5', 'run1/scan_master.h5'],
      },
      { name: 'run2', files: ['/data/run2/b_data_000001.h5', '/data/run2/b_master.h5'] },
    ]);
    // After --acquisition NAME, a folder's files join that acquisition; bare files after a folder start anew.
    expect(groupAcquisitions(['--acquisition', 'first', 'run1', 'c.h5'], fs)).toEqual([
      {
        name: 'first',
        files: ['run1/scan_data_000001.h5', 'run1/scan_data_000002.h5', 'run1/scan_master.h5', 'c.h5'],
      },
    ]);
    expect(groupAcquisitions(['run1', 'c_master.h5'], fs).map((g) => g.name)).toEqual(['run1', 'c']);
  });

  it('refuses a folder without HDF5 files and an acquisition without files', () => {
    expect(() => groupAcquisitions(['empty'], fs)).toThrow(/The folder empty holds no HDF5 files/);
    expect(() => groupAcquisitions(['--acquisition', 'x'], fs)).toThrow(/Acquisition x has no files/);
    expect(() => groupAcquisitions(['--acquisition'], fs)).toThrow(/--acquisition needs a name/);
  });
});
