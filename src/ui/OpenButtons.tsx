import { useRef } from 'react';
import { fetchDemoFiles } from './demo';
import {
  acquisitionFiles,
  directoryPicker,
  filesFromHandle,
  isArchiveFolder,
  relativePathOf,
} from './folder-input';
import { requestSeriesOpen } from './series/series-request';
import { acquisitionStore } from './stores';

/** Opens the HDF5 files of a folder; says so when it holds none. */
export function openFolderFiles(all: File[], folder = 'The folder') {
  // A stemflow archive (manifest.json at the top) opens in the series panel.
  if (isArchiveFolder(all)) {
    requestSeriesOpen(all, all.map(relativePathOf));
    return;
  }
  const { files, skipped } = acquisitionFiles(all);
  if (files.length === 0) {
    acquisitionStore.setState({
      error: `${folder} holds no HDF5 files (.h5, .hdf5, .nxs…)${skipped ? `; ${skipped} other files were left out` : ''}.`,
    });
    return;
  }
  void acquisitionStore.getState().openFiles(files);
}

/**
 * "Open files…" (a file input) and "Open folder…": the File System Access API's folder picker where the
 * browser has one (Chromium), `<input webkitdirectory>` otherwise (Firefox, Safari).
 */
export function OpenButtons() {
  const input = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);

  function onFiles(event: React.ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.currentTarget.files ?? []);
    event.currentTarget.value = ''; // the same files can be chosen again
    if (files.length > 0) void acquisitionStore.getState().openFiles(files);
  }

  function onFolder(event: React.ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.currentTarget.files ?? []);
    event.currentTarget.value = '';
    if (files.length > 0) openFolderFiles(files);
  }

  async function pickFolder() {
    const picker = directoryPicker();
    if (!picker) {
      folderInput.current?.click();
      return;
    }
    try {
      const handle = await picker();
      openFolderFiles(await filesFromHandle(handle), `The folder ${handle.name}`);
    } catch (e) {
      if ((e as { name?: string }).name === 'AbortError') return; // the user closed the picker
      acquisitionStore.setState({ error: `Could not read the folder: ${String(e)}` });
    }
  }

  return (
    <>
      <button type="button" className="primary" onClick={() => input.current?.click()}>
        Open files…
      </button>
      <button
        type="button"
        onClick={() => void pickFolder()}
        data-testid="open-folder"
        title="Open the HDF5 files of a folder (an ARINA master with its data files, or one HDF5 file)"
      >
        Open folder…
      </button>
      <button
        type="button"
        onClick={() =>
          void acquisitionStore.getState().openFrom('the demo acquisition', () => fetchDemoFiles())
        }
        data-testid="open-demo"
        title="Open the demo acquisition shipped with the app (48 x 48 scan, 96 x 96 detector)"
      >
        Demo
      </button>
      <input
        ref={input}
        type="file"
        multiple
        accept=".h5,.hdf5,.hdf,.nxs"
        hidden
        data-testid="file-input"
        onChange={onFiles}
      />
      <input
        ref={folderInput}
        type="file"
        multiple
        hidden
        data-testid="folder-input"
        onChange={onFolder}
        {...{ webkitdirectory: '' }}
      />
    </>
  );
}
