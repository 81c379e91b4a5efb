import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { StemflowError } from '../errors';
import { encodeNpy } from '../io/npy';
import { viewAs } from '../source/acquisition-source';
import { openAcquisition } from '../source/hdf5-acquisition';
import { closeInputs, openInputs } from './inputs';
import { parseScan } from './main';

interface DecodeOptions {
  hash?: boolean;
  frame?: string;
  out?: string;
  scan?: string;
  json?: boolean;
}

const BATCH_FRAMES = 1024;

export async function decodeCommand(paths: string[], options: DecodeOptions): Promise<number> {
  if (paths.length === 0) throw new StemflowError('invalid', 'Give the files to decode.');
  if (!options.hash && options.frame === undefined)
    throw new StemflowError('invalid', 'Say what to do: --hash, or --frame N --out FILE.npy.');
  const inputs = await openInputs(paths);
  try {
    const source = await openAcquisition(inputs, { scan: parseScan(options.scan) });
    const { summary } = source;
    if (options.frame !== undefined) {
      const index = Number(options.frame);
      if (!Number.isInteger(index) || index < 0 || index >= source.frameCount) {
        throw new StemflowError('invalid', `--frame must be an integer in 0..${source.frameCount - 1}`);
      }
      if (!options.out) throw new StemflowError('invalid', '--frame needs --out FILE.npy');
      const frame = viewAs(await source.readFrames(index, 1), summary.dtype);
      await writeFile(options.out, encodeNpy(frame, summary.detector));
      process.stdout.write(
        `wrote frame ${index} (${summary.detector.join('x')} ${summary.dtype}) to ${options.out}\n`,
      );
    }
    if (options.hash) {
      const t0 = performance.now();
      const hash = createHash('sha256');
      for (let first = 0; first < source.frameCount; first += BATCH_FRAMES) {
        hash.update(await source.readFrames(first, Math.min(BATCH_FRAMES, source.frameCount - first)));
      }
      const sha256 = hash.digest('hex');
      const seconds = (performance.now() - t0) / 1000;
      if (options.json) {
        const report = {
          sha256,
          frames: source.frameCount,
          scan: summary.scan,
          detector: summary.detector,
          dtype: summary.dtype,
          bytes: source.frameCount * source.frameBytes,
          seconds,
        };
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } else {
        process.stdout.write(
          `${sha256}  ${source.frameCount} frames ${summary.scan.join('x')} x ${summary.detector.join('x')} ${summary.dtype}\n`,
        );
      }
    }
    await source.close();
    return 0;
  } finally {
    await closeInputs(inputs);
  }
}
