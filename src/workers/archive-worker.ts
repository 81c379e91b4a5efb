/// <reference lib="webworker" />
import { expose } from 'comlink';
import {
  browserArchiveFiles,
  browserArchiveTarget,
  browserSha256,
  fileListArchiveFiles,
  hashBlobHere,
} from '../archive/browser-folder';
import { createBrowserHashPool } from '../archive/browser-hash-pool';
import { preferGpuEncoder } from '../archive/convert';
import { gpuRecordEncoder } from '../archive/gpu-encoder';
import { deviceOnDemand } from '../gpu/device';
import type { InputFile } from '../source/input-file';
import type { ArchiveApi } from './archive-api';
import { createArchiveService } from './archive-service';
import { browserInput } from './browser-input';

/** The archive worker: conversion into a picked folder and exhaustive verification, off the main thread. */
// Requested again after a loss (a conversion after a lost device gets a new one, or the CPU encoder).
const device = deviceOnDemand(async () => {
  const gpu = typeof navigator !== 'undefined' ? navigator.gpu : undefined;
  const adapter = await gpu?.requestAdapter().catch(() => null);
  if (!adapter) return undefined;
  return adapter
    .requestDevice({
      requiredLimits: {
        maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
        maxBufferSize: adapter.limits.maxBufferSize,
      },
    })
    .catch(() => undefined);
});
// The File behind each source input, so the hash threads can read it.
const fileOf = new WeakMap<InputFile, File>();
const service = createArchiveService({
  hash: browserSha256,
  gpuEncoder: (d) => preferGpuEncoder(gpuRecordEncoder(d)),
  device,
  sourceSha256: (input) => {
    const file = fileOf.get(input);
    return file ? hashPool.hash(file, file.name) : undefined;
  },
});

// The archive's files are checked several at once (one thread per file).
const hashPool = createBrowserHashPool(hashBlobHere);

const sets = (s: { name: string; files: File[] }[]) =>
  s.map((x) => ({
    name: x.name,
    inputs: x.files.map((f) => {
      const input = browserInput(f);
      fileOf.set(input, f);
      return input;
    }),
  }));

export const api: ArchiveApi = {
  convert: async (s, folder, onProgress) =>
    service.convert(sets(s), await browserArchiveTarget(folder), onProgress),
  verify: (folder, s, onProgress) =>
    service.verify(
      'files' in folder
        ? fileListArchiveFiles(folder.files, folder.paths, hashPool)
        : browserArchiveFiles(folder, hashPool),
      sets(s),
      onProgress,
    ),
  cancel: () => service.cancel(),
};

expose(api);
