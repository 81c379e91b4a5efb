import { parseArgs } from 'node:util';
import { isStemflowError } from '../errors';
import { decodeCommand } from './decode';
import { inspectCommand } from './inspect';

const USAGE = `stemflow: exact 4D-STEM ingest from Dectris ARINA/EIGER HDF5 files

Usage:
  stemflow inspect FILES... [--json]
      Datasets, shapes, dtypes, filters, chunk index kind and the first chunk offsets of each file,
      and how the files form one acquisition.
  stemflow decode FILES... --hash [--scan ROWSxCOLS]
      SHA-256 of the decoded little-endian frames in scan order.
  stemflow decode FILES... --frame N --out FILE.npy
      Writes one decoded frame as a NumPy .npy file.
  stemflow products FILES... [--backend webgpu|cpu] [--scan ROWSxCOLS] [--json]
      The exact audit, the SHA-256 of the default BF/ABF/ADF virtual images, of the frame totals and of
      the summed diffraction pattern; WebGPU (default) and the CPU twins print the same numbers.
  stemflow bench load [--scan 512] [--det 192] [--distinct 1024] [--batch 4096] [--slots 3] [--repeat 3] [--json FILE]
      Loads a synthetic ARINA-like acquisition through the GPU pass graph (WebGPU via Dawn), checks every
      number against the CPU, and prints per-stage times.
  stemflow bench fit [--scan 512] [--det 192] [--radius 49.3] [--factor 2] [--repeat 3] [--json FILE]
      tcBF with aberration fitting on a synthetic resident acquisition (~7,645 bright-field pixels): stages
      timed separately, fitted aberrations checked against the truth.
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'inspect') {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { json: { type: 'boolean' } },
      });
      return await inspectCommand(positionals, { json: values.json ?? false });
    }
    if (command === 'decode') {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          hash: { type: 'boolean' },
          frame: { type: 'string' },
          out: { type: 'string' },
          scan: { type: 'string' },
          json: { type: 'boolean' },
        },
      });
      return await decodeCommand(positionals, values);
    }
    if (command === 'products') {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          backend: { type: 'string', default: 'webgpu' },
          scan: { type: 'string' },
          json: { type: 'boolean' },
        },
      });
      if (values.backend !== 'webgpu' && values.backend !== 'cpu')
        throw new TypeError('--backend must be webgpu or cpu');
      const { computeProducts } = await import('./products');
      const report = await computeProducts(positionals, values.backend, parseScan(values.scan));
      if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else {
        const lines = [
          `${report.frames} frames, scan ${report.scan.join('x')}, detector ${report.detector.join('x')} ${report.dtype}, backend ${report.backend}`,
          `audit: max ${report.audit.maxCount}, values > 255: ${report.audit.countAbove255}, flagged pixels ${report.audit.flaggedPixels}`,
          `frame totals ${report.frameTotals}`,
          `summed pattern ${report.sumDiffraction}`,
          ...Object.entries(report.images).map(
            ([k, v]) => `${k.toUpperCase()} (${v.pixels} px, sum ${v.sum}) ${v.sha256}`,
          ),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      return 0;
    }
    if (command === 'bench') {
      const [what, ...args] = rest;
      if (what === 'fit') {
        const fitArgs = parseArgs({
          args,
          options: {
            scan: { type: 'string', default: '512' },
            det: { type: 'string', default: '192' },
            radius: { type: 'string', default: '49.3' },
            factor: { type: 'string', default: '2' },
            repeat: { type: 'string', default: '3' },
            json: { type: 'string' },
          },
        }).values;
        const { benchFit } = await import('./bench-fit');
        return await benchFit({
          scan: Number.parseInt(fitArgs.scan, 10),
          det: Number.parseInt(fitArgs.det, 10),
          radius: Number.parseFloat(fitArgs.radius),
          factor: Number.parseInt(fitArgs.factor, 10),
          repeat: Number.parseInt(fitArgs.repeat, 10),
          json: fitArgs.json,
        });
      }
      const { values } = parseArgs({
        args,
        options: {
          scan: { type: 'string', default: '512' },
          det: { type: 'string', default: '192' },
          distinct: { type: 'string', default: '1024' },
          batch: { type: 'string' },
          slots: { type: 'string' },
          repeat: { type: 'string', default: '3' },
          json: { type: 'string' },
          keep: { type: 'boolean' },
        },
      });
      if (what !== 'load')
        throw new TypeError(`Unknown benchmark ${what ?? '(none)'}; try: stemflow bench load`);
      const { benchLoad } = await import('./bench');
      const int = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));
      return await benchLoad({
        scan: int(values.scan)!,
        det: int(values.det)!,
        distinct: int(values.distinct)!,
        batch: int(values.batch),
        slots: int(values.slots),
        repeat: int(values.repeat)!,
        json: values.json,
        keep: values.keep,
      });
    }
    process.stdout.write(USAGE);
    return command === undefined || command === '--help' || command === 'help' ? 0 : 2;
  } catch (e) {
    if (isStemflowError(e)) {
      process.stderr.write(`stemflow: ${e.message} [${e.kind}]\n`);
      return 1;
    }
    if (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`stemflow: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    throw e;
  }
}

export function parseScan(text: string | undefined): [number, number] | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+)x(\d+)$/.exec(text);
  if (!m) throw new TypeError(`--scan must look like 512x512, got ${text}`);
  return [Number(m[1]), Number(m[2])];
}
