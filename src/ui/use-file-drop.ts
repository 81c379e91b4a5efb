import { useEffect, useState } from 'react';
import { type EntryLike, filesFromEntries } from './folder-input';

function carriesFiles(event: DragEvent): boolean {
  return Array.from(event.dataTransfer?.types ?? []).includes('Files');
}

/**
 * Files dropped anywhere on the window; a drop holding a folder goes to `onFolder` with every file under it
 * (or the error that stopped the walk). Returns whether files are being dragged over the window (for the
 * overlay). The browser's default (opening the file in the tab) is prevented everywhere.
 */
export function useFileDrop(
  onFiles: (files: File[]) => void,
  onFolder?: (files: File[], error?: unknown) => void,
): boolean {
  const [dragging, setDragging] = useState(false);
  useEffect(() => {
    let depth = 0;
    const enter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth++;
      setDragging(true);
    };
    const over = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const drop = (e: DragEvent) => {
      e.preventDefault();
      depth = 0;
      setDragging(false);
      // Entries must be taken during the event; a dropped folder is then read asynchronously.
      const entries = Array.from(e.dataTransfer?.items ?? [])
        .map((item) => item.webkitGetAsEntry?.() as EntryLike | null | undefined)
        .filter((entry): entry is EntryLike => !!entry);
      if (onFolder && entries.some((entry) => entry.isDirectory)) {
        void filesFromEntries(entries).then(onFolder, (error) => onFolder([], error));
        return;
      }
      const files = Array.from(e.dataTransfer?.files ?? []);
      if (files.length > 0) onFiles(files);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [onFiles, onFolder]);
  return dragging;
}
