/**
 * Acquires a WebGPU device for the engine. DOM-free: the caller passes the `GPU` object (`navigator.gpu` in a
 * browser or worker, `nodeGpu()` in Node). The device is requested with the adapter's own maxima for the limits
 * the passes need, so a plan can use everything the hardware offers; failures become StemflowError('device').
 */
import { StemflowError } from '../errors.ts';

/** The limits requested at the adapter's maximum (never above it). */
export const MAXIMISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeInvocationsPerWorkgroup',
] as const;

/** Optional features enabled when the adapter offers them. */
export const OPTIONAL_FEATURES: readonly GPUFeatureName[] = ['subgroups', 'timestamp-query'];

export interface AcquireOptions {
  /** Extra limits; each must be <= the adapter's, otherwise a StemflowError('budget') is thrown. */
  requiredLimits?: Record<string, number>;
  powerPreference?: GPUPowerPreference;
}

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for software adapters (SwiftShader, lavapipe in CI); accepted, never refused. */
  isFallbackAdapter: boolean;
}

export interface GpuContext {
  readonly device: GPUDevice;
  readonly adapter: AdapterSummary;
  /** The device's limits after the request (a plain copy). */
  readonly limits: Readonly<Record<string, number>>;
  readonly features: ReadonlySet<string>;
  /** Resolves (never rejects) with the error when the device is lost, including after destroy(). */
  readonly lost: Promise<StemflowError>;
  /** The first uncaptured error or loss, if any. */
  failure(): StemflowError | undefined;
  /** Throws the recorded failure, if any. */
  throwIfFailed(): void;
  destroy(): void;
}

export async function acquireDevice(gpu: GPU, options: AcquireOptions = {}): Promise<GpuContext> {
  const adapter = await wrap('No WebGPU adapter could be requested', () =>
    gpu.requestAdapter(options.powerPreference ? { powerPreference: options.powerPreference } : {}),
  );
  if (!adapter) {
    throw new StemflowError(
      'device',
      'No WebGPU adapter is available: enable WebGPU in the browser, or in Node install a Vulkan driver and set VK_ICD_FILENAMES.',
    );
  }
  const requiredLimits = pickLimits(adapter.limits, options.requiredLimits ?? {});
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  const device = await wrap('The WebGPU device could not be created', () =>
    adapter.requestDevice({ requiredLimits, requiredFeatures, label: 'stemflow' }),
  );
  return makeContext(device, summarise(adapter));
}

function pickLimits(
  adapterLimits: GPUSupportedLimits,
  extra: Record<string, number>,
): Record<string, number> {
  const supported = adapterLimits as unknown as Record<string, number>;
  const limits: Record<string, number> = {};
  for (const name of MAXIMISED_LIMITS) limits[name] = supported[name];
  for (const [name, value] of Object.entries(extra)) {
    const max = supported[name];
    if (typeof max !== 'number') {
      throw new StemflowError('invalid', `The GPU limit ${name} is not known to this adapter.`);
    }
    // For the few "min*Alignment" limits a smaller value is the stricter request.
    const fits = name.startsWith('min') ? value >= max : value <= max;
    if (!fits) {
      throw new StemflowError('budget', `The plan needs ${name} = ${value} but this GPU offers ${max}.`);
    }
    limits[name] = name.startsWith('min') ? value : Math.max(value, limits[name] ?? 0);
  }
  return limits;
}

function summarise(adapter: GPUAdapter): AdapterSummary {
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const legacy = (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter;
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallbackAdapter: Boolean(info.isFallbackAdapter ?? legacy),
  };
}

function makeContext(device: GPUDevice, adapter: AdapterSummary): GpuContext {
  let failure: StemflowError | undefined;
  let destroyed = false;
  const record = (e: StemflowError) => {
    failure ??= e;
    return e;
  };
  device.addEventListener('uncapturederror', (event) => {
    const error = (event as GPUUncapturedErrorEvent).error;
    record(new StemflowError('device', `The GPU reported an error: ${error.message}`, {}, { cause: error }));
  });
  const lost = device.lost.then((info) => {
    const e = new StemflowError(
      'device',
      destroyed
        ? 'The GPU device was released.'
        : `The GPU device was lost (${info.reason}): ${info.message}`,
      {},
      { cause: info },
    );
    return destroyed ? e : record(e);
  });
  const limits: Record<string, number> = {};
  const deviceLimits = device.limits as unknown as Record<string, number>;
  for (const key in device.limits) limits[key] = deviceLimits[key];
  return {
    device,
    adapter,
    limits,
    features: new Set(device.features),
    lost,
    failure: () => failure,
    throwIfFailed() {
      if (failure) throw failure;
    },
    destroy() {
      destroyed = true;
      device.destroy();
    },
  };
}

async function wrap<T>(what: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof StemflowError) throw e;
    const text = e instanceof Error ? e.message : String(e);
    throw new StemflowError('device', `${what}: ${text}`, {}, { cause: e });
  }
}

/**
 * A resource for a worker's life, made on first use and made again when the one made last has failed (`failed`
 * says so of a made one) or could not be made. Callers meanwhile share the same promise.
 */
export function renewOnFailure<T>(make: () => Promise<T>, failed: (made: T) => boolean): () => Promise<T> {
  let current: Promise<T> | undefined;
  let made: { value: T } | undefined;
  return () => {
    if (!current || (made && failed(made.value))) {
      const p = make();
      current = p;
      made = undefined;
      p.then(
        (value) => {
          if (current === p) made = { value };
        },
        () => {
          if (current === p) current = undefined;
        },
      );
    }
    return current;
  };
}

/**
 * A device for a worker's life, requested on first use and again after it is lost (a lost device never comes
 * back, so holding on to it would fail every later call) or after a request that failed.
 */
export function deviceOnDemand<T extends GPUDevice | undefined>(request: () => Promise<T>): () => Promise<T> {
  const lost = new WeakSet<GPUDevice>();
  return renewOnFailure(
    () =>
      request().then((d) => {
        void d?.lost.then(() => lost.add(d));
        return d;
      }),
    (d) => d !== undefined && lost.has(d),
  );
}
