/**
 * Live-mask gestures for `stemflow bench load` (issue 4): one session's updates as a user makes them, and the two
 * target gestures repeated (a nudge, arbitrary half-detector masks), with GPU times from timestamps and every image
 * checked exact against the CPU.
 */
import type { expectedLoad } from '../bench/expected';
import type { GpuLoad } from '../compute/gpu-load';
import type { createVirtualImager, defaultDetectors } from '../compute/gpu-products';
import { createMaskSession, type MaskUpdate } from '../compute/mask-session';
import type { GpuContext } from '../gpu/device';
import { createGpuTimer, type GpuTimer } from '../gpu/gpu-timer';
import { residentReads } from '../kernels/resident-virtual-image';
import { annulus, disk, regionMask } from '../products/detector-geometry';

/** GPU time of one live step from its timestamps: 'live' to 'readback' (the passes), and to 'end' (with the copy). */
async function stepGpuMs(
  timer: GpuTimer | null,
): Promise<{ passMs: number | null; withCopyMs: number | null }> {
  if (!timer) return { passMs: null, withCopyMs: null };
  const marks = await timer.read();
  const at = (label: string) => marks.find((m) => m.label === label)?.ms ?? Number.NaN;
  return { passMs: at('readback') - at('live'), withCopyMs: at('end') - at('live') };
}

type Imager = ReturnType<typeof createVirtualImager>;
type Detectors = ReturnType<typeof defaultDetectors>;

/** Rows an update read: pixels, low-plane and high-plane bytes (uint16: hot segments only), hot segments. */
function updateReads(load: GpuLoad, u: MaskUpdate) {
  const layout = load.plan.resident;
  const a = residentReads(layout, load.hotBitmap, u.added);
  const b = residentReads(layout, load.hotBitmap, u.subtracted);
  return {
    pixels: a.pixels + b.pixels,
    loBytes: a.loBytes + b.loBytes,
    hiBytes: a.hiBytes + b.hiBytes,
    hotSegments: a.hotSegments + b.hotSegments,
    segments: a.segments + b.segments,
  };
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** A mask of exactly half of the unflagged pixels, chosen at random (the worst case from scratch). */
function randomHalf(pixels: number, flagged: Uint8Array | null, seed: number): Uint8Array {
  const counted: number[] = [];
  for (let p = 0; p < pixels; p++) if (!flagged?.[p]) counted.push(p);
  let x = seed >>> 0;
  for (let i = counted.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const j = x % (i + 1);
    [counted[i], counted[j]] = [counted[j], counted[i]];
  }
  const mask = new Uint8Array(pixels);
  for (const p of counted.slice(0, Math.floor(counted.length / 2))) mask[p] = 1;
  return mask;
}

/**
 * Mask gestures as a user makes them, each an update of one live session (mask-session.ts): the GPU time of
 * the update from timestamps (its passes; and with the copy of the image for readback) and the update end to
 * end (plan, submit, readback, float64 image).
 */
export async function benchGestures(
  ctx: GpuContext,
  load: GpuLoad,
  imager: Imager,
  d: Detectors,
  detector: [number, number],
  flagged: Uint8Array | null,
  expected: ReturnType<typeof expectedLoad>,
  log: (s: string) => void,
  /** > 0: also time the pixels each update read as `sustain` passes in one submission (SM clock kept up). */
  sustain = 0,
) {
  const [rows, cols] = detector;
  const c = d.bf.kind === 'disk' ? d.bf : null;
  const r = c ? c.r : rows / 8;
  const cx = c ? c.cx : cols / 2;
  const cy = c ? c.cy : rows / 2;
  const everything = new Uint8Array(rows * cols).fill(1);
  const steps: [string, Uint8Array][] = [
    ['full detector (complement: the frame totals)', everything],
    [
      'arbitrary mask, half of the detector at random (worst case from scratch)',
      randomHalf(rows * cols, flagged, 7),
    ],
    ['BF from scratch', regionMask(disk(cx, cy, r), rows, cols)],
    ['small nudge: BF centre +1 px', regionMask(disk(cx + 1, cy, r), rows, cols)],
    ['BF radius +2 px', regionMask(disk(cx + 1, cy, r + 2), rows, cols)],
    ['ADF from scratch', regionMask(annulus(cx, cy, 1.5 * r, 3 * r), rows, cols)],
    ['large edge motion: ADF outer radius +25%', regionMask(annulus(cx, cy, 1.5 * r, 3.75 * r), rows, cols)],
    ['wide ADF inner radius change: 1.5 r -> 1.0 r', regionMask(annulus(cx, cy, r, 3.75 * r), rows, cols)],
    ['everything but the BF disk', regionMask(disk(cx, cy, r), rows, cols).map((v) => 1 - v)],
  ];
  const session = createMaskSession(imager, flagged);
  const results = [];
  for (const [name, mask] of steps) {
    const timer = createGpuTimer(ctx, 3);
    const t = performance.now();
    const update = await session.update(mask, { timer: timer ?? undefined });
    const liveMs = performance.now() - t;
    const gpu = await stepGpuMs(timer);
    timer?.destroy();
    const want = expected.imageOf(mask);
    const exact = update.image.every((v, i) => v === want(i));
    const reads = updateReads(load, update);
    let sustainedMs: number | null = null;
    if (sustain > 0 && update.pixelsRead > 0) {
      const read = new Uint8Array(rows * cols);
      for (const p of update.added) read[p] = 1;
      for (const p of update.subtracted) read[p] = 1;
      sustainedMs = await imager.gpuTime(read, sustain);
    }
    results.push({
      name,
      mode: update.mode,
      pixelsRead: update.pixelsRead,
      loBytes: reads.loBytes,
      hiBytes: reads.hiBytes,
      hotSegments: reads.hotSegments,
      segments: reads.segments,
      gpuMs: gpu.passMs,
      gpuWithCopyMs: gpu.withCopyMs,
      sustainedMs,
      liveMs,
      exact,
    });
    log(
      `gesture: ${name}: ${update.mode}, ${update.pixelsRead} pixels read (${mb(reads.loBytes)} low + ${mb(reads.hiBytes)} high, ${reads.hotSegments}/${reads.segments} segments hot), GPU ${fixed(gpu.passMs, 3)} ms (+ copy ${fixed(gpu.withCopyMs, 3)} ms)${sustainedMs === null ? '' : `, sustained ${fixed(sustainedMs, 3)} ms per pass (${sustain} in one submission, ${((reads.loBytes + reads.hiBytes) / (sustainedMs * 1e-3) / 1e12).toFixed(2)} TB/s)`}, live update ${liveMs.toFixed(1)} ms end to end, ${exact ? 'exact' : 'MISMATCH'}`,
    );
  }
  return results;
}

/**
 * The two target gestures repeated: a nudge of the BF disk back and forth (deltas of the changed pixels) and
 * arbitrary half-detector masks from scratch, alternating (n updates each; median and range; every image
 * checked).
 */
export async function benchRepeatedGestures(
  ctx: GpuContext,
  load: GpuLoad,
  imager: Imager,
  d: Detectors,
  detector: [number, number],
  flagged: Uint8Array | null,
  expected: ReturnType<typeof expectedLoad>,
  log: (s: string) => void,
  n = 12,
) {
  const [rows, cols] = detector;
  const c = d.bf.kind === 'disk' ? d.bf : null;
  const r = c ? c.r : rows / 8;
  const cx = c ? c.cx : cols / 2;
  const cy = c ? c.cy : rows / 2;
  const pairs: [string, Uint8Array, Uint8Array][] = [
    [
      'nudge BF centre by 1 px, back and forth',
      regionMask(disk(cx, cy, r), rows, cols),
      regionMask(disk(cx + 1, cy, r), rows, cols),
    ],
    [
      'arbitrary half-detector masks, alternating',
      randomHalf(rows * cols, flagged, 11),
      randomHalf(rows * cols, flagged, 12),
    ],
    [
      'arbitrary half-detector masks, alternating (seeds 7, 8)',
      randomHalf(rows * cols, flagged, 7),
      randomHalf(rows * cols, flagged, 8),
    ],
  ];
  const out = [];
  for (const [name, a, b] of pairs) {
    const session = createMaskSession(imager, flagged);
    await session.update(a);
    const gpu: number[] = [];
    const live: number[] = [];
    const modes = new Set<string>();
    let exact = true;
    let read = 0;
    let bytes = { loBytes: 0, hiBytes: 0 };
    const wantA = expected.imageOf(a);
    const wantB = expected.imageOf(b);
    // One at a time, as a drag sends them; the images are checked and the timers read after the loop, so
    // the host adds no gaps of its own between updates.
    const sequence: { image: Float64Array; timer: GpuTimer | null }[] = [];
    for (let i = 0; i < n; i++) {
      const timer = createGpuTimer(ctx, 3);
      const t = performance.now();
      const update = await session.update(i % 2 === 0 ? b : a, { timer: timer ?? undefined });
      live.push(performance.now() - t);
      modes.add(update.mode);
      read = Math.max(read, update.pixelsRead);
      const r = updateReads(load, update);
      if (r.loBytes + r.hiBytes > bytes.loBytes + bytes.hiBytes) bytes = r;
      sequence.push({ image: update.image, timer });
    }
    for (const [i, { image, timer }] of sequence.entries()) {
      const g = await stepGpuMs(timer);
      timer?.destroy();
      if (g.passMs !== null) gpu.push(g.passMs);
      const want = i % 2 === 0 ? wantB : wantA;
      exact &&= image.every((v, k) => v === want(k));
    }
    // The same updates issued back to back without waiting (the GPU stays busy: clocks up, no idle gaps).
    const timers = Array.from({ length: n }, () => createGpuTimer(ctx, 3));
    const burst = await Promise.all(
      timers.map((timer, i) => session.update(i % 2 === 0 ? b : a, { timer: timer ?? undefined })),
    );
    burst.forEach((u, i) => {
      const want = i % 2 === 0 ? wantB : wantA;
      exact &&= u.image.every((v, k) => v === want(k));
    });
    const burstGpu: number[] = [];
    for (const timer of timers) {
      const g = await stepGpuMs(timer);
      timer?.destroy();
      if (g.passMs !== null) burstGpu.push(g.passMs);
    }
    const row = {
      name,
      updates: n,
      modes: [...modes],
      maxPixelsRead: read,
      /** Bytes of the update that read the most. */
      maxLoBytes: bytes.loBytes,
      maxHiBytes: bytes.hiBytes,
      gpuMs: stats(gpu),
      liveMs: stats(live),
      backToBackGpuMs: stats(burstGpu),
      gpuEach: gpu,
      exact,
    };
    out.push(row);
    log(
      `repeated: ${name}: ${[...modes].join('/')}, up to ${read} pixels read (${mb(bytes.loBytes)} low + ${mb(bytes.hiBytes)} high); one at a time: GPU median ${fixed(row.gpuMs.median, 3)} ms (${fixed(row.gpuMs.min, 3)}-${fixed(row.gpuMs.max, 3)}), live median ${fixed(row.liveMs.median, 1)} ms (${fixed(row.liveMs.min, 1)}-${fixed(row.liveMs.max, 1)}); back to back: GPU median ${fixed(row.backToBackGpuMs.median, 3)} ms (${fixed(row.backToBackGpuMs.min, 3)}-${fixed(row.backToBackGpuMs.max, 3)}); ${exact ? 'exact' : 'MISMATCH'}`,
    );
  }
  return out;
}

function stats(v: number[]): { median: number | null; min: number | null; max: number | null } {
  if (!v.length) return { median: null, min: null, max: null };
  const s = [...v].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] };
}

function fixed(v: number | null, digits: number): string {
  return v === null ? 'n/a' : v.toFixed(digits);
}
