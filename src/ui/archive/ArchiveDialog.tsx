import { useRef, useState } from 'react';
import type { ArchiveConvertSummary, ArchiveProgress, ArchiveVerifySummary } from '../../workers/archive-api';
import { archiveClient } from '../../workers/archive-remote';
import { closeOnEscape, DialogClose } from '../DialogClose';
import { relativePathOf } from '../folder-input';
import { formatBytes } from '../format';

interface SourceSet {
  id: number;
  name: string;
  files: File[];
}

let nextId = 1;
const plain = (sets: SourceSet[]) => sets.map(({ name, files }) => ({ name, files }));

type Picker = (options?: { mode?: 'read' | 'readwrite'; id?: string }) => Promise<FileSystemDirectoryHandle>;

function directoryPicker(): Picker | undefined {
  return (window as unknown as { showDirectoryPicker?: Picker }).showDirectoryPicker;
}

function setName(files: File[]): string {
  const master = files.find((f) => /_master\.h5$/.test(f.name)) ?? files[0];
  return master ? master.name.replace(/(_master)?\.h5$/, '') : 'acquisition';
}

function progressText(p: ArchiveProgress | null): string {
  if (!p) return '';
  if (p.stage === 'check archive')
    return `checking archive files: ${formatBytes(p.done)} of ${formatBytes(p.total)}`;
  return `acquisition ${p.acquisition + 1}: ${p.stage} ${p.done} of ${p.total} frames`;
}

/**
 * Lossless archives from the app: choose source files (one set per acquisition), convert them into a folder
 * picked with the File System Access API, or verify an archive folder against its sources (every count
 * compared, on the GPU where possible).
 */
export function ArchiveDialog() {
  const [open, setOpen] = useState(false);
  const [sets, setSets] = useState<SourceSet[]>([]);
  const [progress, setProgress] = useState<ArchiveProgress | null>(null);
  const [busy, setBusy] = useState<'convert' | 'verify' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [converted, setConverted] = useState<ArchiveConvertSummary | null>(null);
  const [verified, setVerified] = useState<ArchiveVerifySummary | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const picker = directoryPicker();

  function onFiles(event: React.ChangeEvent<HTMLInputElement>) {
    const files = Array.from(event.currentTarget.files ?? []);
    event.currentTarget.value = '';
    if (files.length > 0) setSets((s) => [...s, { id: nextId++, name: setName(files), files }]);
  }

  async function run(kind: 'convert' | 'verify', chosen?: File[]) {
    setError(null);
    setConverted(null);
    setVerified(null);
    let folder: FileSystemDirectoryHandle | { files: File[]; paths: string[] };
    if (chosen) folder = { files: chosen, paths: chosen.map(relativePathOf) };
    else if (picker) {
      try {
        folder = await picker({ mode: kind === 'convert' ? 'readwrite' : 'read', id: 'stemflow-archive' });
      } catch {
        return; // the user closed the picker
      }
    } else return;
    setBusy(kind);
    try {
      const client = archiveClient();
      if (kind === 'convert' && !('files' in folder))
        setConverted(await client.convert(plain(sets), folder, setProgress));
      else setVerified(await client.verify(folder, plain(sets), setProgress));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(null);
      setProgress(null);
    }
  }

  return (
    <>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        data-testid="archive-toggle"
      >
        Archive…
      </button>
      {open ? (
        <div
          className="archive-dialog"
          role="dialog"
          aria-label="Lossless archive"
          data-testid="archive-dialog"
          onKeyDown={closeOnEscape(() => setOpen(false))}
        >
          <DialogClose onClose={() => setOpen(false)} label="the archive panel" />
          <h2>Lossless archive</h2>
          <p className="muted">
            Every count is kept exactly (tANS-coded, docs/archive-format.md). One set of files per
            acquisition.
          </p>
          <ol data-testid="archive-sets">
            {sets.map((s, i) => (
              <li key={s.id}>
                <input
                  aria-label={`Name of acquisition ${i + 1}`}
                  value={s.name}
                  onChange={(e) => {
                    const name = e.currentTarget.value;
                    setSets((all) => all.map((x, j) => (j === i ? { ...x, name } : x)));
                  }}
                />{' '}
                {s.files.length} file(s), {formatBytes(s.files.reduce((n, f) => n + f.size, 0))}{' '}
                <button type="button" onClick={() => setSets((all) => all.filter((_, j) => j !== i))}>
                  Remove
                </button>
              </li>
            ))}
          </ol>
          <button type="button" onClick={() => input.current?.click()} disabled={busy !== null}>
            Add acquisition files…
          </button>
          <input
            ref={input}
            type="file"
            multiple
            hidden
            accept=".h5,.hdf5"
            data-testid="archive-file-input"
            onChange={onFiles}
          />
          {picker ? (
            <div className="archive-actions">
              <button
                type="button"
                className="primary"
                disabled={busy !== null || sets.length === 0}
                onClick={() => void run('convert')}
                data-testid="archive-convert"
              >
                Convert into folder…
              </button>
              <button
                type="button"
                disabled={busy !== null || sets.length === 0}
                onClick={() => void run('verify')}
                data-testid="archive-verify"
              >
                Verify archive folder…
              </button>
              {busy ? (
                <button type="button" onClick={() => void archiveClient().cancel()}>
                  Cancel
                </button>
              ) : null}
            </div>
          ) : (
            <div className="archive-actions">
              <button
                type="button"
                disabled={busy !== null || sets.length === 0}
                onClick={() => folderInput.current?.click()}
                data-testid="archive-verify"
              >
                Verify archive folder…
              </button>
              <input
                ref={folderInput}
                type="file"
                hidden
                multiple
                data-testid="archive-verify-folder-input"
                {...{ webkitdirectory: '' }}
                onChange={(e) => {
                  const files = Array.from(e.currentTarget.files ?? []);
                  e.currentTarget.value = '';
                  if (files.length > 0) void run('verify', files);
                }}
              />
              {busy ? (
                <button type="button" onClick={() => void archiveClient().cancel()}>
                  Cancel
                </button>
              ) : null}
              <p className="notice">
                Writing archive folders needs the File System Access API (Chrome or Edge); here use the
                command line: <code>stemflow convert</code>. Verifying works in every browser.
              </p>
            </div>
          )}
          {busy ? <p data-testid="archive-progress">{progressText(progress) || `${busy}…`}</p> : null}
          {error ? (
            <p className="error" role="alert" data-testid="archive-error">
              {error}
            </p>
          ) : null}
          {converted ? (
            <p data-testid="archive-converted">
              Wrote {converted.acquisitions.length} acquisition(s): {formatBytes(converted.archiveBytes)} for{' '}
              {formatBytes(converted.rawBytes)} of counts (
              {(converted.archiveBytes / converted.sourceBytes).toFixed(3)} x the bitshuffle/LZ4 bytes) in{' '}
              {(converted.ms / 1000).toFixed(1)} s ({converted.encoder} encoder).
            </p>
          ) : null}
          {verified ? (
            <div data-testid="archive-verified" data-ok={verified.ok ? 'yes' : 'no'}>
              <p>
                {verified.ok ? 'Verified: every count is identical.' : 'VERIFICATION FAILED.'}{' '}
                {verified.archiveFiles} archive files match their SHA-256 ({verified.backend}).
              </p>
              <ul>
                {verified.acquisitions.map((a) => (
                  <li key={a.name}>
                    {a.name}: {a.compared.toLocaleString()} values compared, {a.mismatches} mismatches,{' '}
                    {a.laneErrors} damaged lanes;{' '}
                    {a.sourceFiles.every((f) => f.matches)
                      ? 'the source files are the ones recorded'
                      : 'a source file differs from the one recorded'}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </div>
      ) : null}
    </>
  );
}
