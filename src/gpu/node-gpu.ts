/**
 * Node only: a `GPU` object from the npm package `webgpu` (Dawn). The browser uses `navigator.gpu` instead.
 * Dawn finds its Vulkan driver through VK_ICD_FILENAMES (see scripts/gpu-env.sh).
 */
import { create, globals } from 'webgpu';

let globalsInstalled = false;
const instances = new Map<string, GPU>();

/** Dawn toggles, e.g. ['backend=null'] for a validation-only device without a driver. */
export function nodeGpu(flags: readonly string[] = []): GPU {
  if (!globalsInstalled) {
    // GPUBufferUsage, GPUShaderStage, GPUMapMode ... as in a browser.
    for (const [name, value] of Object.entries(globals)) {
      if (!(name in globalThis)) Object.defineProperty(globalThis, name, { value, configurable: true });
    }
    globalsInstalled = true;
  }
  const key = flags.join('\n');
  let gpu = instances.get(key);
  if (!gpu) {
    gpu = create([...flags]);
    instances.set(key, gpu);
  }
  return gpu;
}
