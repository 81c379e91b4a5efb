/** The archive worker's API (src/workers/archive-worker.ts): convert acquisitions into a tANS archive, verify one. */

export interface ArchiveProgress {
  stage: 'convert' | 'check archive' | 'verify';
  acquisition: number;
  done: number;
  total: number;
}

export interface ArchiveConvertSummary {
  acquisitions: { name: string; scan: [number, number]; detector: [number, number]; dtype: string }[];
  rawBytes: number;
  /** Compressed bytes of the source chunks. */
  sourceBytes: number;
  archiveBytes: number;
  ms: number;
  encoder: 'webgpu' | 'cpu';
}

export interface ArchiveVerifySummary {
  acquisitions: {
    name: string;
    compared: number;
    mismatches: number;
    laneErrors: number;
    badBlocks: { firstFrame: number; frames: number; mismatches: number }[];
    /** Each given source file's SHA-256 and whether it is the file the archive was made from. */
    sourceFiles: { path: string; sha256: string; matches: boolean }[];
    ms: number;
  }[];
  archiveFiles: number;
  backend: 'webgpu' | 'cpu';
  ok: boolean;
}

export interface ArchiveApi {
  /** Converts each set of files (one acquisition each) into a new archive in `folder`. */
  convert(
    sets: { name: string; files: File[] }[],
    folder: FileSystemDirectoryHandle,
    onProgress?: (p: ArchiveProgress) => void,
  ): Promise<ArchiveConvertSummary>;
  /** Checks the archive in `folder` and compares every count with the source sets. */
  /**
   * `folder`: a picked folder, or the files of a folder chosen with `<input webkitdirectory>` (no File System
   * Access API needed: Safari, Firefox) with each file's path 'folder/sub/name'.
   */
  verify(
    folder: FileSystemDirectoryHandle | { files: File[]; paths: string[] },
    sets: { name: string; files: File[] }[],
    onProgress?: (p: ArchiveProgress) => void,
  ): Promise<ArchiveVerifySummary>;
  /** Stops a running conversion (its temporaries are removed) or verification. */
  cancel(): Promise<void>;
}
