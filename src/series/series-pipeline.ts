/**
 * The series query's launch shape and pipelines (src/shaders/tans-query.wgsl, src/series/series.ts).
 */
import { DTYPE_BITS } from '../archive/lanes';
import type { ArchiveAcquisition } from '../archive/reader';
import { StemflowError } from '../errors';
import source from '../shaders/tans-query.wgsl?raw';

/** Query invocations per workgroup unless a series is loaded with another. */
export const WORKGROUP = 64;
/**
 * Invocations of one dispatch: 1,048,576 lanes (16,384 workgroups; at most ~2,304 values each, ~15 ms of ADF
 * work on an H200, below the ~50 ms single dispatches on which Dawn failed, ../shared/gpu-kit). Dispatches of a
 * data buffer write one sums buffer, so each waits for the one before; fewer, larger ones lose less to their
 * tails: H200, 2 acquisitions, interleaved rounds (`bench series --tune`): BF 32.1 ms against 34.6 at 262,144
 * lanes, ADF 118.6 against 122.6 (docs/bench/series-tune-2026-11-30.json).
 */
export const LANES_PER_DISPATCH = 1 << 20;

/** The validated launch shape of a series' queries. */
export function queryLaunch(
  device: GPUDevice,
  options: { queryWorkgroupSize?: number; lanesPerDispatch?: number },
): { workgroupSize: number; lanesPerDispatch: number } {
  const workgroupSize = options.queryWorkgroupSize ?? WORKGROUP;
  const lanesPerDispatch = options.lanesPerDispatch ?? LANES_PER_DISPATCH;
  const pow2 = (v: number, lo: number, hi: number) =>
    Number.isInteger(v) && v >= lo && v <= hi && (v & (v - 1)) === 0;
  if (!pow2(workgroupSize, 32, Math.min(256, device.limits.maxComputeInvocationsPerWorkgroup)))
    throw new StemflowError(
      'invalid',
      `A query workgroup of ${workgroupSize} is not a power of two in 32..256.`,
    );
  if (
    !pow2(lanesPerDispatch, 2 ** 14, 2 ** 22) ||
    lanesPerDispatch / workgroupSize > device.limits.maxComputeWorkgroupsPerDimension
  )
    throw new StemflowError(
      'invalid',
      `${lanesPerDispatch} lanes per dispatch is not a power of two in 2^14..2^22 that this GPU dispatches.`,
    );
  return { workgroupSize, lanesPerDispatch };
}

/** The query pipeline of an acquisition: one per (dtype, table log), which a series' acquisitions usually share. */
export function queryPipelines(
  device: GPUDevice,
  workgroupSize: number,
): (acq: ArchiveAcquisition) => GPUComputePipeline {
  const pipelines = new Map<string, GPUComputePipeline>();
  const module = device.createShaderModule({ label: 'tans-query.wgsl', code: source });
  return (acq) => {
    const bitsPer = DTYPE_BITS[acq.info.dtype];
    const key = `${bitsPer}/${acq.info.tableLog}`;
    let p = pipelines.get(key);
    if (!p) {
      p = device.createComputePipeline({
        label: `tans-query ${key}`,
        layout: 'auto',
        compute: {
          module,
          entryPoint: 'main',
          constants: {
            WORKGROUP_SIZE: workgroupSize,
            TABLE_LOG: acq.info.tableLog,
            BITS: bitsPer,
            TOKENS: acq.records[0].tables.tokens,
          },
        },
      });
      pipelines.set(key, p);
    }
    return p;
  };
}
