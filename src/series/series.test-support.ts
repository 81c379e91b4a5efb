/**
 * Fixtures of the series GPU tests: a three-acquisition archive of the ARINA oracle set and the full-decode
 * reference every query is compared with.
 */
import { join } from 'node:path';
import { convertArchive } from '../archive/convert';
import { nodeArchiveFiles, nodeArchiveTarget, nodeSha256 } from '../archive/node-folder';
import { type Archive, type ArchiveAcquisition, openArchive } from '../archive/reader';
import { openSource, plantValue, tempDir } from '../archive/testing';
import { annulus, disk, regionMask } from '../products/detector-geometry';
import { fixture, loadOracle } from '../testing/fixtures';

export const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);

/** Three acquisitions of one detector: the ARINA set, and two with planted values (one above 255). */
export async function seriesArchive(): Promise<Archive> {
  const { source, close } = await openSource(arinaPaths);
  const dir = join(await tempDir(), 'series');
  await convertArchive(
    [
      { name: 'a', source, sources: [] },
      { name: 'b', source: plantValue(source, 5, 48 * 96 + 48, 60000), sources: [] },
      { name: 'c', source: plantValue(source, 33, 48 * 96 + 50, 0), sources: [] },
    ],
    await nodeArchiveTarget(dir),
    { hash: nodeSha256, codec: { recordFrames: 16, lanesPerFrame: 4, classes: 8, blockFrames: 8 } },
  );
  await close();
  return openArchive(nodeArchiveFiles(dir), { hash: nodeSha256 });
}

/** The full-decode reference: every frame decoded on the CPU, masked sums without flagged pixels. */
export async function reference(acq: ArchiveAcquisition, mask: Uint8Array): Promise<Float64Array> {
  const n = acq.info.scan[0] * acq.info.scan[1];
  const pixels = acq.geometry.pixels;
  const values = await acq.readFrames(0, n);
  const out = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    let s = 0;
    for (let p = 0; p < pixels; p++) if (mask[p] && !acq.pixelMask?.[p]) s += values[f * pixels + p];
    out[f] = s;
  }
  return out;
}

/** The detector of an archive's first acquisition and mask makers on it: a disk and an annulus. */
export function detectorMasks(archive: Archive) {
  const [rows, cols] = archive.acquisitions[0].info.detector;
  return {
    rows,
    cols,
    circle: (cx: number, cy: number, r: number) => regionMask(disk(cx, cy, r), rows, cols),
    ring: (cx: number, cy: number, r0: number, r1: number) => regionMask(annulus(cx, cy, r0, r1), rows, cols),
  };
}
