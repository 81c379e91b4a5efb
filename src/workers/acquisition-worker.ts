/// <reference lib="webworker" />
import { expose, transfer } from 'comlink';
import type { AcquisitionApi } from './acquisition-api';
import { createAcquisitionService } from './acquisition-service';
import { browserInput } from './browser-input';

/** Files opened while set fail their reads after this many (the 'read-failure' fault); null: no fault. */
let failReadsAfter: number | null = null;

/** The acquisition worker: HDF5 indexing and exact decoding off the main thread. */
const service = createAcquisitionService({
  gpu: typeof navigator !== 'undefined' ? navigator.gpu : undefined,
});

export const api: AcquisitionApi = {
  open: (files, scan, dataset) =>
    service.openInputs(
      files.map((f) => browserInput(f, failReadsAfter)),
      scan,
      dataset,
    ),
  load: async (onProgress) => {
    const result = await service.load(onProgress);
    return transfer(result, [result.sumDiffraction.buffer, result.frameTotals.buffer]);
  },
  pixelMask: async () => {
    const mask = (await service.pixelMask()).slice();
    return transfer(mask, [mask.buffer]);
  },
  frame: async (index) => {
    const f = await service.frame(index);
    return transfer(f, [f.buffer]);
  },
  virtualImage: async (mask) => {
    const image = await service.virtualImage(mask);
    return transfer(image, [image.buffer]);
  },
  setBackend: (preference) => service.setBackend(preference),
  cancel: () => service.cancel(),
  com: async (mask, centre) => {
    const { comX, comY } = await service.com(mask, centre);
    return transfer({ comX, comY }, [comX.buffer, comY.buffer]);
  },
  regionSum: async (region) => {
    const sums = await service.regionSum(region);
    return transfer(sums, [sums.buffer]);
  },
  setMemoryBudget: (bytes) => service.setMemoryBudget(bytes),
  injectFault: async (fault) => {
    failReadsAfter = fault === 'read-failure' ? 2 : null;
    await service.injectFault(fault === 'read-failure' ? 'none' : fault);
  },
  gpuMemory: () => service.gpuMemory(),
  close: () => service.close(),
  tcbf: async (request, onProgress) => {
    const r = await service.tcbf(request, onProgress);
    return transfer(r, [r.tcbf.buffer, r.phaseFlip.buffer]);
  },
  cancelTcbf: () => service.cancelTcbf(),
};

expose(api);
