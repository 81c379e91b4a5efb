import type { Dataset, Entity, ExternalLink, Group, File as H5File } from 'h5wasm';
import { StemflowError } from '../errors';

/**
 * Metadata through h5wasm (the HDF5 C library): paths, links, attributes, scalar values. Chunk byte ranges
 * come from our own reader (src/io/hdf5), which h5wasm cannot provide. An opener gives an h5wasm File for
 * an input: by path in Node, through WORKERFS (lazy File.slice reads) in a browser worker.
 */
export type MetadataOpener = () => Promise<MetadataHandle>;

export interface MetadataHandle {
  readonly file: H5File;
  close(): void;
}

/** Runs `fn` with h5wasm, turning library exceptions into a StemflowError that names the file. */
export function wrapH5wasm<T>(fileName: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof StemflowError) throw e;
    const text = e instanceof Error ? e.message : String(e);
    throw new StemflowError(
      'corrupt',
      `The HDF5 library could not read this file: ${text}`,
      { file: fileName },
      { cause: e },
    );
  }
}

export function isGroup(e: Entity | null): e is Group {
  return (e as { type?: string } | null)?.type === 'Group';
}

export function isDataset(e: Entity | null): e is Dataset {
  return (e as { type?: string } | null)?.type === 'Dataset';
}

export function isExternalLink(e: Entity | null): e is ExternalLink {
  return (e as { type?: string } | null)?.type === 'ExternalLink';
}

/** A scalar number from a dataset or attribute value, or undefined. */
export function scalar(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'bigint') return Number(value);
  if (ArrayBuffer.isView(value) && (value as unknown as ArrayLike<number>).length === 1) {
    return scalar((value as unknown as ArrayLike<number | bigint>)[0]);
  }
  if (Array.isArray(value) && value.length === 1) return scalar(value[0]);
  return undefined;
}
