/**
 * WGSL text of every pass. Vite's `?raw` import gives the file as a string both in the app build and under
 * vitest (Node), so there is a single way to load shaders. Parameters go through `override` constants and
 * uniforms; the text is never templated.
 *
 * Shared WGSL: a pass names a snippet of src/shaders/common/ with a line `// #include "common/<name>.wgsl"`,
 * replaced by the snippet's text on every `?raw` import (scripts/wgsl-include.mjs: a plugin in vite.config.ts,
 * vitest.config.ts and the esbuild bundles of scripts/build-cli.mjs and scripts/fuzz.mjs). So the strings here,
 * and what `structLayout(source, 'Params')` parses, are the final sources; wgsl-validate.test.ts compiles them.
 */
import bitunshuffle from '../shaders/bitunshuffle.wgsl?raw';
import bslz4Decode from '../shaders/bslz4-decode.wgsl?raw';
import bslz4DecodeList from '../shaders/bslz4-decode-list.wgsl?raw';
import bslz4DecodeListAhead from '../shaders/bslz4-decode-list-ahead.wgsl?raw';
import bslz4DecodeListAheadPlanes from '../shaders/bslz4-decode-list-ahead-planes.wgsl?raw';
import bslz4DecodeListAheadPlanesQx from '../shaders/bslz4-decode-list-ahead-planes-qx.wgsl?raw';
import bslz4DecodeListAheadV4 from '../shaders/bslz4-decode-list-ahead-v4.wgsl?raw';
import bslz4DecodeListAheadV4Qx from '../shaders/bslz4-decode-list-ahead-v4-qx.wgsl?raw';
import bslz4DecodeListPlanes from '../shaders/bslz4-decode-list-planes.wgsl?raw';
import bslz4DecodeListPlanesQx from '../shaders/bslz4-decode-list-planes-qx.wgsl?raw';
import bslz4DecodeListV4 from '../shaders/bslz4-decode-list-v4.wgsl?raw';
import bslz4DecodeListV4Qx from '../shaders/bslz4-decode-list-v4-qx.wgsl?raw';
import bslz4DecodeMulti from '../shaders/bslz4-decode-multi.wgsl?raw';
import bslz4DecodeMultiPlanes from '../shaders/bslz4-decode-multi-planes.wgsl?raw';
import bslz4DecodeMultiV4 from '../shaders/bslz4-decode-multi-v4.wgsl?raw';
import bslz4Parse from '../shaders/bslz4-parse.wgsl?raw';
import detectorTranspose from '../shaders/detector-transpose.wgsl?raw';
import detectorTransposeHistogram from '../shaders/detector-transpose-histogram.wgsl?raw';
import detectorTransposePlanes from '../shaders/detector-transpose-planes.wgsl?raw';
import fft from '../shaders/fft.wgsl?raw';
import highPoolPlace from '../shaders/high-pool-place.wgsl?raw';
import packedIndex from '../shaders/packed-index.wgsl?raw';
import packedQuery from '../shaders/packed-query.wgsl?raw';
import residentVirtualImage from '../shaders/resident-virtual-image.wgsl?raw';
import tansCompare from '../shaders/tans-compare.wgsl?raw';
import tansEncode from '../shaders/tans-encode.wgsl?raw';
import tansQuery from '../shaders/tans-query.wgsl?raw';
import tansStats from '../shaders/tans-stats.wgsl?raw';
import tansValues from '../shaders/tans-values.wgsl?raw';
import tcbfGather from '../shaders/tcbf-gather.wgsl?raw';
import tcbfPeak from '../shaders/tcbf-peak.wgsl?raw';
import tcbfPhaseFlip from '../shaders/tcbf-phase-flip.wgsl?raw';
import tcbfShiftSum from '../shaders/tcbf-shift-sum.wgsl?raw';
import tcbfSpectrumProduct from '../shaders/tcbf-spectrum-product.wgsl?raw';
import virtualDetector from '../shaders/virtual-detector.wgsl?raw';

export const shaderSource = {
  bitunshuffle,
  'bslz4-decode': bslz4Decode,
  'bslz4-decode-multi': bslz4DecodeMulti,
  'bslz4-decode-list': bslz4DecodeList,
  'bslz4-decode-list-ahead': bslz4DecodeListAhead,
  'bslz4-decode-multi-v4': bslz4DecodeMultiV4,
  'bslz4-decode-list-v4': bslz4DecodeListV4,
  'bslz4-decode-list-ahead-v4': bslz4DecodeListAheadV4,
  'bslz4-decode-multi-planes': bslz4DecodeMultiPlanes,
  'bslz4-decode-list-planes': bslz4DecodeListPlanes,
  'bslz4-decode-list-ahead-planes': bslz4DecodeListAheadPlanes,
  'bslz4-decode-list-v4-qx': bslz4DecodeListV4Qx,
  'bslz4-decode-list-ahead-v4-qx': bslz4DecodeListAheadV4Qx,
  'bslz4-decode-list-planes-qx': bslz4DecodeListPlanesQx,
  'bslz4-decode-list-ahead-planes-qx': bslz4DecodeListAheadPlanesQx,
  'bslz4-parse': bslz4Parse,
  'detector-transpose': detectorTranspose,
  'detector-transpose-histogram': detectorTransposeHistogram,
  'detector-transpose-planes': detectorTransposePlanes,
  'high-pool-place': highPoolPlace,
  'resident-virtual-image': residentVirtualImage,
  'tans-compare': tansCompare,
  'tans-query': tansQuery,
  'tans-encode': tansEncode,
  'tans-stats': tansStats,
  'tans-values': tansValues,
  'packed-index': packedIndex,
  'packed-query': packedQuery,
  'virtual-detector': virtualDetector,
  fft,
  'tcbf-gather': tcbfGather,
  'tcbf-peak': tcbfPeak,
  'tcbf-phase-flip': tcbfPhaseFlip,
  'tcbf-shift-sum': tcbfShiftSum,
  'tcbf-spectrum-product': tcbfSpectrumProduct,
} as const;

export type ShaderName = keyof typeof shaderSource;
