import { useCallback, useEffect } from 'react';
import { DetectorPanel } from './DetectorPanel';
import { demoWanted, fetchDemoFiles } from './demo';
import { GpuNotice } from './GpuNotice';
import { openFolderFiles } from './OpenButtons';
import { StatusLine } from './StatusLine';
import { acquisitionStore, viewStore } from './stores';
import { TopBar } from './TopBar';
import { useFileDrop } from './use-file-drop';
import { useKeyboard } from './use-keyboard';
import { VirtualImagePanel } from './VirtualImagePanel';

let demoStarted = false;

/** Opens the demo acquisition once per page (React's development double effects included). */
function openDemoOnce() {
  if (demoStarted || !demoWanted()) return;
  demoStarted = true;
  void acquisitionStore.getState().openFrom('the demo acquisition', () => fetchDemoFiles());
}

export function App() {
  const onFiles = useCallback((files: File[]) => void acquisitionStore.getState().openFiles(files), []);
  const onFolder = useCallback((files: File[], error?: unknown) => {
    if (error) acquisitionStore.setState({ error: `Could not read the dropped folder: ${String(error)}` });
    else openFolderFiles(files);
  }, []);
  const dragging = useFileDrop(onFiles, onFolder);
  useEffect(openDemoOnce, []);
  useKeyboard(acquisitionStore, viewStore);

  return (
    <div className="app" data-testid="app">
      <TopBar />
      <GpuNotice />
      <StatusLine />
      <main className="panels">
        <VirtualImagePanel />
        <DetectorPanel />
      </main>
      {dragging ? (
        <div className="drop-overlay" data-testid="drop-overlay">
          <div className="drop-message">
            Drop an ARINA/EIGER master file with its data shards, their folder, one HDF5 file, or a stemflow
            archive folder (it opens in the series panel)
          </div>
        </div>
      ) : null}
    </div>
  );
}
