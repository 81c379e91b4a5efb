/** `stemflow convert` and `stemflow verify`: lossless tANS archives from the command line. */

import { readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { type CodecParams, convertArchive, preferGpuEncoder, type RecordEncoder } from '../archive/convert';
import { gpuRecordEncoder } from '../archive/gpu-encoder';
import { nodeArchiveFiles, nodeArchiveTarget, nodeFileIdentities, nodeSha256 } from '../archive/node-folder';
import { openArchive } from '../archive/reader';
import { cpuVerifier, type VerifyReport, verifyAcquisition } from '../archive/verify';
import { StemflowError } from '../errors';
import { acquireDevice, type GpuContext } from '../gpu/device';
import { nodeGpu } from '../gpu/node-gpu';
import { createStagingPool } from '../gpu/staging-pool';
import { openAcquisition } from '../source/hdf5-acquisition';
import { HDF5_NAME } from '../source/hdf5-names';
import { closeInputs, openInputs } from './inputs';

const GB = 1e9;
const log = (s: string) => process.stdout.write(`${s}\n`);

/**
 * Splits `FILES... [--acquisition NAME FILES...]...` into acquisitions. Files before the first
 * `--acquisition` form one acquisition named after its first file. A folder stands for the HDF5 files directly
 * in it (in name order): after `--acquisition NAME` they join that acquisition; otherwise the folder is an
 * acquisition of its own, named after it (so `convert run1/ run2/ --out DIR` makes two).
 */
export function groupAcquisitions(
  args: string[],
  fs: { isDirectory(path: string): boolean; list(path: string): string[] } = nodeFolders,
): { name: string; files: string[] }[] {
  const groups: { name: string; files: string[] }[] = [];
  let current: { name: string; files: string[] } | undefined;
  let named = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--acquisition') {
      const name = args[++i];
      if (!name) throw new TypeError('--acquisition needs a name');
      current = { name, files: [] };
      named = true;
      groups.push(current);
    } else if (fs.isDirectory(args[i])) {
      const files = fs
        .list(args[i])
        .filter((f) => HDF5_NAME.test(f))
        .sort()
        .map((f) => join(args[i], f));
      if (files.length === 0) throw new TypeError(`The folder ${args[i]} holds no HDF5 files`);
      if (current && named) current.files.push(...files);
      else {
        groups.push({ name: basename(resolve(args[i])), files });
        current = undefined;
      }
    } else {
      if (!current) {
        current = { name: '', files: [] };
        named = false;
        groups.push(current);
      }
      current.files.push(args[i]);
    }
  }
  for (const g of groups) {
    if (g.files.length === 0) throw new TypeError(`Acquisition ${g.name || '(unnamed)'} has no files`);
    if (!g.name) g.name = basename(g.files[0]).replace(/(_master)?\.h5$/, '');
  }
  return groups;
}

const nodeFolders = {
  isDirectory: (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false,
  list: (path: string) => readdirSync(path),
};

export interface ConvertCliOptions {
  out: string;
  scan?: [number, number];
  codec: Partial<CodecParams>;
  backend: 'webgpu' | 'cpu';
  json: boolean;
}

export async function convertCommand(args: string[], o: ConvertCliOptions): Promise<number> {
  const groups = groupAcquisitions(args);
  const opened: { close(): Promise<void> }[] = [];
  let ctx: GpuContext | undefined;
  let encoderToClose: RecordEncoder | undefined;
  try {
    const t0 = performance.now();
    const inputs = [];
    // The source files are hashed (worker threads) while they are converted; the manifest takes them at the end.
    let hashMs = 0;
    for (const g of groups) {
      const sources = nodeFileIdentities(g.files).then((s) => {
        hashMs = performance.now() - t0;
        return s;
      });
      sources.catch(() => undefined); // the conversion fails with it (convertArchive), or an open failed first
      const files = await openInputs(g.files);
      opened.push({ close: () => closeInputs(files) });
      const source = await openAcquisition(files, o.scan ? { scan: o.scan } : {});
      opened.push(source);
      inputs.push({ name: g.name, source, sources });
    }
    const openMs = performance.now() - t0;
    let encoder: RecordEncoder | undefined;
    if (o.backend === 'webgpu') {
      ctx = await acquireDevice(nodeGpu());
      // Two lent readbacks, every record lent: a shard is written straight from the GPU's mapped readback and
      // hashed from the file; a record that finds both out waits for one to come back instead of copying its
      // words into host memory. On the H200 one converted an acquisition 5-10 % faster than three in four paired
      // runs of the ninth session (fewer readbacks to make), two 2-15 % faster than one in three of the tenth,
      // and waiting instead of copying gave one record every 50-55 ms instead of 58-65 in the twelfth
      // (docs/performance.md).
      encoder = preferGpuEncoder(gpuRecordEncoder(ctx.device, { lendReadbacks: 2, lentOnly: true }));
      encoderToClose = encoder;
    }
    const target = await nodeArchiveTarget(o.out);
    const result = await convertArchive(inputs, target, {
      hash: nodeSha256,
      codec: o.codec,
      encoder,
      writesInFlight: 4,
      writer: 'stemflow convert',
      onProgress: o.json
        ? undefined
        : ({ acquisition, framesDone, frameCount }) =>
            process.stderr.write(`\r${groups[acquisition].name}: ${framesDone}/${frameCount} frames`),
    });
    if (!o.json) process.stderr.write('\n');
    const compressed = inputs.reduce((n, i) => n + i.source.summary.compressedBytes, 0);
    const report = {
      out: o.out,
      acquisitions: result.manifest.acquisitions.map((a) => ({
        name: a.name,
        scan: a.scan,
        detector: a.detector,
        dtype: a.dtype,
        audit: a.audit,
      })),
      rawBytes: result.rawBytes,
      sourceCompressedBytes: compressed,
      archiveBytes: result.archiveBytes,
      ratioToSource: result.archiveBytes / compressed,
      bitsPerValue:
        (8 * result.archiveBytes) /
        (result.rawBytes /
          (result.manifest.acquisitions[0].dtype === 'uint8'
            ? 1
            : result.manifest.acquisitions[0].dtype === 'uint16'
              ? 2
              : 4)),
      ms: {
        /** From the command's start: the sources opened and indexed, all their files hashed (alongside). */
        openSources: openMs,
        hashSources: hashMs,
        /** From the command's start to the archive published. */
        wall: performance.now() - t0,
        encodeMs: result.timings.encodeMs,
        writeMs: result.timings.writeMs,
        totalMs: result.timings.totalMs,
      },
      rawGBps: result.rawBytes / GB / (result.timings.totalMs / 1000),
    };
    if (o.json) log(JSON.stringify(report, null, 2));
    else {
      log(`wrote ${o.out}: ${report.acquisitions.length} acquisition(s), ${result.archiveBytes} bytes`);
      log(
        `  raw ${result.rawBytes} bytes, source (compressed) ${compressed} bytes, archive / source = ${report.ratioToSource.toFixed(3)}, ${report.bitsPerValue.toFixed(3)} bits per value`,
      );
      log(
        `  encode ${result.timings.encodeMs.toFixed(0)} ms, write+hash ${result.timings.writeMs.toFixed(0)} ms, total ${result.timings.totalMs.toFixed(0)} ms (${report.rawGBps.toFixed(2)} GB/s raw); from the start: sources opened at ${openMs.toFixed(0)} ms, their files hashed (alongside the conversion) at ${hashMs.toFixed(0)} ms, archive published at ${report.ms.wall.toFixed(0)} ms`,
      );
    }
    return 0;
  } finally {
    encoderToClose?.close?.();
    for (const c of opened.reverse()) await c.close();
    ctx?.destroy();
  }
}

export async function verifyCommand(
  archiveDir: string,
  args: string[],
  o: { backend: 'webgpu' | 'cpu'; json: boolean; scan?: [number, number] },
): Promise<number> {
  const groups = groupAcquisitions(args);
  const t0 = performance.now();
  const archive = await openArchive(nodeArchiveFiles(archiveDir), { hash: nodeSha256 });
  const openMs = performance.now() - t0;
  let ctx: GpuContext | undefined;
  // The acquisitions after the first reuse the first's mapped staging.
  const staging = createStagingPool();
  const reports: (VerifyReport & { sourceFiles: { path: string; sha256: string; matches: boolean }[] })[] =
    [];
  try {
    if (groups.length !== archive.acquisitions.length && !(groups.length === 1 && groups[0].name)) {
      throw new StemflowError(
        'mismatch',
        `The archive holds ${archive.acquisitions.length} acquisitions; ${groups.length} source sets were given.`,
      );
    }
    for (const [i, g] of groups.entries()) {
      const acq = archive.acquisitions.find((a) => a.info.name === g.name) ?? archive.acquisitions[i];
      if (!acq) throw new StemflowError('not-found', `The archive has no acquisition ${g.name}.`);
      // The source files are hashed (worker threads) while they are verified.
      const hashing = nodeFileIdentities(g.files);
      hashing.catch(() => undefined); // awaited after the verification, unless opening the sources fails first
      const sourceFiles = async () =>
        (await hashing).map((id) => {
          const known = acq.info.sources.find((s) => s.path === id.path);
          return {
            path: id.path,
            sha256: id.sha256,
            matches: known?.sha256 === id.sha256 && known.size === id.size,
          };
        });
      const files = await openInputs(g.files);
      try {
        const source = await openAcquisition(files, o.scan ? { scan: o.scan } : {});
        try {
          let report: VerifyReport;
          if (o.backend === 'webgpu' && source.storedCodec.gpu) {
            ctx ??= await acquireDevice(nodeGpu());
            const { verifyAcquisitionGpu } = await import('../archive/gpu-verify');
            report = await verifyAcquisitionGpu(ctx.device, acq, source, { staging });
          } else {
            report = await verifyAcquisition(acq, source, cpuVerifier);
          }
          reports.push({ ...report, sourceFiles: await sourceFiles() });
        } finally {
          await source.close();
        }
      } finally {
        await closeInputs(files);
      }
    }
  } finally {
    staging.clear();
    ctx?.destroy();
    await archive.close();
  }
  const bad = reports.reduce((n, r) => n + r.mismatches + r.laneErrors, 0);
  const out = {
    archive: archiveDir,
    archiveFiles: archive.manifest.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
    openAndChecksumMs: openMs,
    acquisitions: reports,
    ok: bad === 0,
  };
  if (o.json) log(JSON.stringify(out, null, 2));
  else {
    log(
      `archive ${archiveDir}: ${archive.manifest.files.length} files, every SHA-256 matches the manifest (${openMs.toFixed(0)} ms)`,
    );
    for (const r of reports) {
      log(
        `${r.acquisition}: compared ${r.compared} values, ${r.mismatches} mismatches, ${r.laneErrors} damaged lanes (${r.ms.toFixed(0)} ms, ${((r.compared * 2) / GB / (r.ms / 1000)).toFixed(2)} GB/s raw-equivalent)`,
      );
      for (const b of r.badBlocks.slice(0, 20))
        log(`  frames ${b.firstFrame}..${b.firstFrame + b.frames - 1}: ${b.mismatches} mismatches`);
      for (const f of r.sourceFiles)
        log(
          `  source ${f.path} sha256 ${f.sha256} ${f.matches ? '(as recorded)' : '(NOT the recorded file)'}`,
        );
    }
    log(bad === 0 ? 'verified: every count is identical' : 'VERIFICATION FAILED');
  }
  return bad === 0 ? 0 : 1;
}
