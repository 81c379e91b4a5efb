import { parseArgs } from 'node:util';
import { isStemflowError } from '../errors';
import { TRANSPOSE_LOADS, type TransposeLoads } from '../gpu/passes/detector-transpose';
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
  stemflow convert FILES... [--acquisition NAME FILES...]... --out DIR [--backend webgpu|cpu]
          [--record 16384] [--lanes N] [--classes 32] [--table-log 11] [--scan ROWSxCOLS] [--json]
      Writes a lossless tANS archive (docs/archive-format.md) of one or more acquisitions into the new
      folder DIR (never replaces one; temporaries are removed on failure). A folder given as FILES is the
      acquisition of the HDF5 files in it, named after the folder: convert run1/ run2/ --out DIR.
  stemflow verify ARCHIVE FILES... [--acquisition NAME FILES...]... [--backend webgpu|cpu] [--json]
      Checks every archive file's SHA-256, then decodes every saved count and compares it with the source
      files; prints compared values, mismatches per block and SHA-256s. Exit status 1 on any mismatch.
  stemflow bench load [--scan 512] [--det 192] [--distinct 1024] [--batch 4096] [--slots 3] [--repeat 3] [--json FILE]
                    [--variants wg128,wg64-stage8,...] [--transpose-variants base,batched,vec4,vec4-t8,...] [--transpose-loads scalar|batched|vec4] [--transpose-tiles 1,2,4] [--pool] [--segment 4096] [--high slots|full] [--pool-share 0.0625] [--compact] [--slices 16] [--decode VARIANT] [--parse-ahead on|off] [--copy-ahead on|off] [--histogram transpose|decode] [--decoded packed|planes] [--row-pixels N] [--row-tiles batch|untiled]
                    [--vi-workgroup 256] [--sustain 200]
      Loads a synthetic ARINA-like acquisition through the GPU pass graph (WebGPU via Dawn), checks every
      number against the CPU, and prints per-stage times.
  stemflow bench series [--scan 512] [--det 192] [--count N] [--budget GIB] [--lanes N] [--repeat 3] [--json FILE]
                      [--tune WORKGROUP:LANES,...] [--index [--index-launch 64,256,...]]
      Converts a synthetic acquisition into an archive, loads it encoded onto the GPU as N acquisitions of a
      series (as many as the budget admits) and times mask gestures over all of them (median, p95); with
      --index, builds the exact index in the budget left and times the gestures on it.
  stemflow bench convert [--scan 512] [--det 192] [--distinct 1024] [--record 16384] [--slots 2] [--lend 2] [--copy-fallback]
      [--writes 4] [--budget 64] [--verify-slots 2] [--verify-pieces 4096]
      [--read-piece 8] [--acquisitions N] [--runs 1] [--hash-at-end]
      [--sources alongside|before|none] [--decode VARIANT] [--json FILE]
      Converts a synthetic acquisition into a lossless tANS archive with the GPU encoder (--runs cold
      conversions one after another; the last is verified), verifies every count on the GPU, and prints per-stage times, GB/s and the archive's size against bitshuffle/LZ4; with
      --acquisitions N, also converts N copies into one archive with one encoder (a series); --decode sets the
      source decode's variant in the encoder and the verifier (default: the walk decode every device runs).
  stemflow bench decode [--scan 512] [--det 192] [--distinct 1024] [--batch 8192] [--variant base,scratch,...] [--rounds 3]
                      [--repeat 3] [--json FILE]
      Times bitshuffle/LZ4 decode variants on one uploaded batch (GPU timestamps, GB/s of decoded output) and
      checks each one exact (words, errors, totals, audit; also on corrupted chunks against the CPU twin).
  stemflow bench memory [--mib 1024] [--repeat 6] [--rounds 3] [--json FILE]
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
    if (command === 'convert' || command === 'verify') {
      const { values, tokens } = parseArgs({
        args: rest,
        allowPositionals: true,
        tokens: true,
        strict: false,
        options: {
          out: { type: 'string' },
          backend: { type: 'string', default: 'webgpu' },
          record: { type: 'string' },
          lanes: { type: 'string' },
          classes: { type: 'string' },
          'table-log': { type: 'string' },
          scan: { type: 'string' },
          json: { type: 'boolean' },
          acquisition: { type: 'string', multiple: true },
        },
      });
      // Positionals and --acquisition markers, in order (the options above are taken out).
      const grouped: string[] = [];
      for (const t of tokens ?? []) {
        if (t.kind === 'positional') grouped.push(t.value);
        else if (t.kind === 'option' && t.name === 'acquisition')
          grouped.push('--acquisition', String(t.value));
      }
      const backend = values.backend;
      if (backend !== 'webgpu' && backend !== 'cpu') throw new TypeError('--backend must be webgpu or cpu');
      const { convertCommand, verifyCommand } = await import('./archive');
      const int = (v: unknown) => (typeof v === 'string' ? Number.parseInt(v, 10) : undefined);
      const scan = parseScan(typeof values.scan === 'string' ? values.scan : undefined);
      if (command === 'verify') {
        const [archive, ...files] = grouped;
        if (!archive || files.length === 0) throw new TypeError('verify needs ARCHIVE and the source FILES');
        return await verifyCommand(archive, files, { backend, json: values.json === true, scan });
      }
      if (typeof values.out !== 'string') throw new TypeError('convert needs --out DIR');
      const codec = Object.fromEntries(
        Object.entries({
          recordFrames: int(values.record),
          lanesPerFrame: int(values.lanes),
          classes: int(values.classes),
          tableLog: int(values['table-log']),
        }).filter(([, v]) => v !== undefined),
      );
      return await convertCommand(grouped, {
        out: values.out,
        scan,
        codec,
        backend,
        json: values.json === true,
      });
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
      if (what === 'memory') {
        const m = parseArgs({
          args,
          options: {
            mib: { type: 'string', default: '1024' },
            repeat: { type: 'string', default: '6' },
            rounds: { type: 'string', default: '3' },
            json: { type: 'string' },
          },
        }).values;
        const { benchMemory } = await import('./bench-memory');
        return await benchMemory({
          mib: Number.parseInt(m.mib, 10),
          repeat: Number.parseInt(m.repeat, 10),
          rounds: Number.parseInt(m.rounds, 10),
          json: m.json,
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
          'verify-slots': { type: 'string' },
          'verify-pieces': { type: 'string' },
          acquisitions: { type: 'string' },
          'read-piece': { type: 'string' },
          repeat: { type: 'string', default: '3' },
          runs: { type: 'string' },
          'hash-at-end': { type: 'boolean' },
          sources: { type: 'string' },
          json: { type: 'string' },
          keep: { type: 'boolean' },
          record: { type: 'string' },
          count: { type: 'string' },
          budget: { type: 'string' },
          lanes: { type: 'string' },
          variants: { type: 'string' },
          'transpose-tiles': { type: 'string' },
          'transpose-variants': { type: 'string' },
          'transpose-loads': { type: 'string' },
          rounds: { type: 'string' },
          tune: { type: 'string' },
          variant: { type: 'string' },
          pool: { type: 'boolean' },
          segment: { type: 'string' },
          compact: { type: 'boolean' },
          high: { type: 'string' },
          'pool-share': { type: 'string' },
          decode: { type: 'string' },
          'parse-ahead': { type: 'string' },
          'copy-ahead': { type: 'string' },
          decoded: { type: 'string' },
          histogram: { type: 'string' },
          'row-pixels': { type: 'string' },
          'row-tiles': { type: 'string' },
          slices: { type: 'string' },
          'vi-workgroup': { type: 'string' },
          sustain: { type: 'string' },
          lend: { type: 'string' },
          'copy-fallback': { type: 'boolean' },
          writes: { type: 'string' },
          index: { type: 'boolean' },
          'index-launch': { type: 'string' },
        },
      });
      if (what === 'decode') {
        const { benchDecode } = await import('./bench-decode');
        const n = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));
        return await benchDecode({
          scan: n(values.scan)!,
          det: n(values.det)!,
          distinct: n(values.distinct)!,
          batch: n(values.batch),
          variants: values.variant?.split(',') ?? [],
          repeat: n(values.repeat)!,
          rounds: n(values.rounds),
          json: values.json,
        });
      }
      if (what === 'series') {
        const { benchSeries } = await import('./bench-series');
        const { parseTune } = await import('./bench-series-tune');
        const n = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));
        return await benchSeries({
          scan: n(values.scan)!,
          det: n(values.det)!,
          distinct: n(values.distinct)!,
          count: n(values.count),
          budgetGiB: n(values.budget),
          lanes: n(values.lanes),
          repeat: n(values.repeat)!,
          tune: values.tune === undefined ? undefined : parseTune(values.tune),
          index: values.index,
          indexLaunch: values['index-launch']?.split(',').map((v) => ({ workgroup: Number.parseInt(v, 10) })),
          json: values.json,
        });
      }
      if (what === 'convert') {
        const { benchConvert } = await import('./bench-convert');
        const n = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));
        return await benchConvert({
          scan: n(values.scan)!,
          det: n(values.det)!,
          distinct: n(values.distinct)!,
          record: n(values.record),
          slots: n(values.slots),
          verifySlots: n(values['verify-slots']),
          verifyPieces: n(values['verify-pieces']),
          readPieceMiB: n(values['read-piece']),
          lend: n(values.lend),
          copyFallback: values['copy-fallback'],
          writes: n(values.writes),
          budgetGiB: n(values.budget),
          acquisitions: n(values.acquisitions),
          runs: n(values.runs),
          hashAtEnd: values['hash-at-end'],
          sources: oneOf(values.sources, '--sources', ['alongside', 'before', 'none'] as const),
          decode: values.decode,
          json: values.json,
          keep: values.keep,
        });
      }
      if (what !== 'load')
        throw new TypeError(
          `Unknown benchmark ${what ?? '(none)'}; try: stemflow bench load, decode, convert, series, fit or memory`,
        );
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
        variants: values.variants?.split(','),
        // --transpose-tiles N,... is kept as the variants tN,...
        transposeVariants: [
          ...(values['transpose-variants']?.split(',') ?? []),
          ...(values['transpose-tiles']?.split(',').map((t) => `t${t}`) ?? []),
        ],
        transposeLoads: parseTransposeLoads(values['transpose-loads']),
        pool: values.pool,
        segmentFrames: int(values.segment),
        compact: values.compact,
        highPlane: oneOf(values.high, '--high', ['slots', 'full'] as const),
        poolShare: values['pool-share'] === undefined ? undefined : Number(values['pool-share']),
        decodeVariant: values.decode,
        parseAhead: parseOnOff(values['parse-ahead'], '--parse-ahead'),
        copyAhead: parseOnOff(values['copy-ahead'], '--copy-ahead'),
        histogramIn: oneOf(values.histogram, '--histogram', ['transpose', 'decode'] as const),
        decoded: oneOf(values.decoded, '--decoded', ['packed', 'planes'] as const),
        rowPixels: int(values['row-pixels']),
        rowTiles: oneOf(values['row-tiles'], '--row-tiles', ['batch', 'untiled'] as const),
        slices: int(values.slices),
        workgroupSize: int(values['vi-workgroup']),
        sustain: int(values.sustain),
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

function parseTransposeLoads(v: string | undefined): TransposeLoads | undefined {
  if (v === undefined || (TRANSPOSE_LOADS as readonly string[]).includes(v)) return v as TransposeLoads;
  throw new TypeError(`--transpose-loads is ${TRANSPOSE_LOADS.join(', ')}; not '${v}'`);
}

function parseOnOff(v: string | undefined, flag: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'on' || v === 'off') return v === 'on';
  throw new TypeError(`${flag} takes on or off, not ${v}`);
}

/** `v` when it is one of `values` (or absent), else a TypeError naming the flag and its values. */
function oneOf<T extends string>(v: string | undefined, flag: string, values: readonly T[]): T | undefined {
  if (v === undefined || (values as readonly string[]).includes(v)) return v as T | undefined;
  const listed = `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
  throw new TypeError(`${flag} takes ${listed}, not ${v}`);
}
