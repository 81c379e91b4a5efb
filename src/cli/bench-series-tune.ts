/**
 * `stemflow bench series --tune WG:LANES,...`: the series query kernel's launch shape (invocations per workgroup,
 * lanes per dispatch), timed the way `bench decode` times its variants. One series of `count` acquisitions is
 * loaded per configuration (all at once), every configuration's images are checked identical to the first's,
 * then BF and ADF from scratch are timed in interleaved rounds (GPU timestamps around the query's passes), so a
 * change of the GPU's clocks during the run hits every configuration alike.
 */
import type { Archive } from '../archive/reader';
import type { GpuContext } from '../gpu/device';
import { createGpuTimer } from '../gpu/gpu-timer';
import type { ExactImage } from '../series/series';
import { loadSeries, type Series } from '../series/series';

export interface TuneConfig {
  workgroupSize: number;
  lanesPerDispatch: number;
}

/** `64:262144,128:1048576` -> configurations. */
export function parseTune(text: string): TuneConfig[] {
  return text.split(',').map((part) => {
    const [wg, lanes] = part.split(':').map(Number);
    if (!Number.isInteger(wg) || !Number.isInteger(lanes))
      throw new Error(`--tune takes WORKGROUP:LANES pairs, e.g. 64:262144 (got '${part}').`);
    return { workgroupSize: wg, lanesPerDispatch: lanes };
  });
}

export interface TuneReport {
  config: TuneConfig;
  /** Median and best GPU time of the query's passes for the whole series, per gesture. */
  gestures: { name: string; medianMs: number; minMs: number; runsMs: number[] }[];
  identical: boolean;
}

export async function tuneSeriesQuery(
  ctx: GpuContext,
  archive: Archive,
  configs: TuneConfig[],
  masks: { name: string; mask: Uint8Array }[],
  { rounds, repeat, budgetBytes }: { rounds: number; repeat: number; budgetBytes: number },
  log: (s: string) => void,
): Promise<TuneReport[]> {
  const loaded: Series[] = [];
  try {
    for (const c of configs) {
      loaded.push(
        await loadSeries(ctx.device, archive, {
          budgetBytes,
          queryWorkgroupSize: c.workgroupSize,
          lanesPerDispatch: c.lanesPerDispatch,
        }),
      );
    }
    // Exactness across configurations: every image of every gesture equal to the first configuration's.
    const reference: ExactImage[][] = [];
    for (const { mask } of masks)
      reference.push((await loaded[0].virtualImages(mask, { mode: 'full' })).images);
    const identical: boolean[] = [];
    for (const s of loaded) {
      let same = true;
      for (const [gi, { mask }] of masks.entries()) {
        const b = (await s.virtualImages(mask, { mode: 'full' })).images;
        same &&= reference[gi].every((image, i) => image.every((v, k) => v === b[i][k]));
      }
      identical.push(same);
    }
    const runs = configs.map(() => masks.map(() => [] as number[]));
    for (let round = 0; round < rounds; round++) {
      for (const [ci, s] of loaded.entries()) {
        for (const [gi, { mask }] of masks.entries()) {
          for (let k = 0; k < repeat; k++) {
            const timer = createGpuTimer(ctx, 3);
            await s.virtualImages(mask, { mode: 'full', timer: timer ?? undefined });
            if (timer) {
              const marks = await timer.read();
              runs[ci][gi].push(marks[1].ms - marks[0].ms);
              timer.destroy();
            }
          }
        }
      }
    }
    return configs.map((config, ci) => {
      const report: TuneReport = {
        config,
        identical: identical[ci],
        gestures: masks.map(({ name }, gi) => {
          const sorted = [...runs[ci][gi]].sort((a, b) => a - b);
          return {
            name,
            medianMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
            minMs: sorted[0] ?? Number.NaN,
            runsMs: runs[ci][gi],
          };
        }),
      };
      log(
        `query workgroup ${config.workgroupSize}, ${config.lanesPerDispatch} lanes a dispatch: ${report.gestures
          .map((g) => `${g.name} GPU median ${g.medianMs.toFixed(2)} ms (best ${g.minMs.toFixed(2)})`)
          .join(', ')}; images ${report.identical ? 'identical' : 'DIFFERENT'}`,
      );
      return report;
    });
  } finally {
    await Promise.all(loaded.map((s) => s.release()));
  }
}
