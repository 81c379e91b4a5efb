/** The fuzz targets by name: preparation (fixtures, oracle checks), one case, and the per-case time bound. */
import type { CaseReport, TargetName } from './report.ts';
import { archiveInput, prepareArchive, runArchiveCase } from './target-archive.ts';
import { codecInput, prepareCodec, runCodecCase } from './target-codec.ts';
import { gpuInput, prepareGpu, runGpuCase } from './target-gpu.ts';
import { hdf5Input, prepareHdf5, runHdf5Case } from './target-hdf5.ts';
import { prepareSource, runSourceCase, sourceInput } from './target-source.ts';

export interface InputFiles {
  files: { name: string; bytes: Uint8Array }[];
  mutation: string;
}

export interface Target {
  name: TargetName;
  /** A case running longer than this is a hang. */
  timeoutMs: number;
  prepare(): Promise<unknown>;
  run(state: unknown, seed: number, index: number): Promise<CaseReport>;
  /** The case's input, regenerated (to save the input of a case that hung). */
  input(state: unknown, seed: number, index: number): InputFiles;
  /** Releases what `prepare` holds open (the fuzz processes exit instead; tests call it). */
  dispose?(state: unknown): Promise<void>;
}

export const TARGETS: Record<TargetName, Target> = {
  hdf5: {
    name: 'hdf5',
    timeoutMs: 10_000,
    prepare: prepareHdf5,
    run: (s, seed, i) => runHdf5Case(s as Awaited<ReturnType<typeof prepareHdf5>>, seed, i),
    input: (s, seed, i) => {
      const r = hdf5Input(s as Awaited<ReturnType<typeof prepareHdf5>>, seed, i);
      return { files: r.files, mutation: `${r.file.name}: ${r.mutated.description}` };
    },
  },
  codec: {
    name: 'codec',
    timeoutMs: 5_000,
    prepare: prepareCodec,
    run: (s, seed, i) => runCodecCase(s as Awaited<ReturnType<typeof prepareCodec>>, seed, i),
    input: (s, seed, i) => {
      const r = codecInput(s as Awaited<ReturnType<typeof prepareCodec>>, seed, i);
      return { files: [{ name: 'chunk.bin', bytes: r.bytes }], mutation: r.mutation };
    },
  },
  source: {
    name: 'source',
    timeoutMs: 30_000,
    prepare: prepareSource,
    run: (s, seed, i) => runSourceCase(s as Awaited<ReturnType<typeof prepareSource>>, seed, i),
    input: (s, seed, i) => {
      const r = sourceInput(s as Awaited<ReturnType<typeof prepareSource>>, seed, i);
      return { files: r.files, mutation: r.mutation };
    },
  },
  archive: {
    name: 'archive',
    timeoutMs: 20_000,
    prepare: prepareArchive,
    run: (s, seed, i) => runArchiveCase(s as Awaited<ReturnType<typeof prepareArchive>>, seed, i),
    dispose: (s) => (s as Awaited<ReturnType<typeof prepareArchive>>).source.close(),
    input: (s, seed, i) => {
      const r = archiveInput(s as Awaited<ReturnType<typeof prepareArchive>>, seed, i);
      return {
        files: [...r.files].map(([name, bytes]) => ({ name: name.replaceAll('/', '__'), bytes })),
        mutation: r.description,
      };
    },
  },
  gpu: {
    name: 'gpu',
    timeoutMs: 300_000,
    prepare: () => prepareGpu(),
    run: (s, seed, i) => runGpuCase(s as Awaited<ReturnType<typeof prepareGpu>>, seed, i),
    input: (s, seed, i) => {
      const b = gpuInput(s as Awaited<ReturnType<typeof prepareGpu>>, seed, i);
      return {
        files: [
          { name: 'slot.bin', bytes: b.slot },
          { name: 'index.u32', bytes: new Uint8Array(b.index.buffer) },
          { name: 'flags.u32', bytes: new Uint8Array(b.flags.buffer) },
        ],
        mutation: `${b.mutation}\n${b.frames.map((f, k) => `${k}: ${f.mutation}`).join('\n')}`,
      };
    },
  },
};
