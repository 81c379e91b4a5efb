import { StemflowError, withErrorContext } from '../errors';
import type { Calibration } from '../workers/acquisition-api';
import { baseName, classifyFile, type FileRole } from './classify';
import type { InputFile } from './input-file';

/** One dataset holding consecutive frames of the acquisition. */
export interface PlanPart {
  input: InputFile;
  dataset: string;
}

/** Which files and datasets make the acquisition, in frame order, decided from metadata alone. */
export interface AcquisitionPlan {
  kind: 'arina-master' | 'arina-shards' | 'single';
  name: string;
  parts: PlanPart[];
  pixelMask: { input: InputFile; path: string } | null;
  calibration: Calibration;
  scanHint: [number, number] | null;
}

const SHARD_NUMBER = /_data_(\d+)\.(h5|hdf5|nxs)$/i;

/** Decides how dropped files form one acquisition; names the file in every error. */
export async function planAcquisition(inputs: InputFile[], dataset?: string): Promise<AcquisitionPlan> {
  if (inputs.length === 0) throw new StemflowError('invalid', 'No files were given.');
  const seen = new Set<string>();
  for (const input of inputs) {
    if (seen.has(input.name)) {
      throw new StemflowError('mismatch', 'The same file name was given twice; drop each file once', {
        file: input.name,
      });
    }
    seen.add(input.name);
  }
  const roles = await Promise.all(
    inputs.map(async (input) => {
      try {
        return await classifyFile(input);
      } catch (e) {
        throw withErrorContext(e, { file: input.name });
      }
    }),
  );
  const byRole = (kind: FileRole['kind']) =>
    inputs.flatMap((_input, i) => (roles[i].kind === kind ? [i] : []));
  const masters = byRole('master');
  const shards = byRole('shard');
  const singles = byRole('single');

  if (masters.length > 1) {
    const names = masters.map((i) => inputs[i].name).join(', ');
    throw new StemflowError(
      'mismatch',
      `Several master files were dropped (${names}); open one acquisition at a time`,
    );
  }
  if (masters.length === 1) return planFromMaster(inputs, roles, masters[0]);
  if (shards.length > 0) return planFromShards(inputs, shards);
  if (singles.length === 1) return planFromSingle(inputs[singles[0]], roles[singles[0]], dataset);
  if (singles.length > 1) {
    throw new StemflowError(
      'mismatch',
      `Several unrelated HDF5 files were dropped (${singles.map((i) => inputs[i].name).join(', ')}); open one at a time`,
    );
  }
  throw new StemflowError(
    'not-found',
    'No 4D-STEM data found: expected an ARINA/EIGER master file with its data files, data files alone, or an HDF5 file with a 3D or 4D integer dataset',
    { file: inputs.map((i) => i.name).join(', ') },
  );
}

function planFromMaster(inputs: InputFile[], roles: FileRole[], m: number): AcquisitionPlan {
  const master = inputs[m];
  const role = roles[m] as Extract<FileRole, { kind: 'master' }>;
  const byName = new Map(inputs.map((input) => [input.name, input]));
  const parts = role.links.map((link) => {
    const input = byName.get(link.file);
    if (!input) {
      throw new StemflowError(
        'not-found',
        `The master file links ${link.name} to ${link.file}, which was not among the dropped files; drop the master together with all its data files`,
        { file: master.name },
      );
    }
    return { input, dataset: link.path };
  });
  return {
    kind: 'arina-master',
    name: master.name.replace(/_master\.(h5|hdf5|nxs)$/i, '').replace(/\.(h5|hdf5|nxs)$/i, ''),
    parts,
    pixelMask: role.pixelMaskPath ? { input: master, path: role.pixelMaskPath } : null,
    calibration: role.calibration,
    scanHint: role.scanHint,
  };
}

function planFromShards(inputs: InputFile[], shards: number[]): AcquisitionPlan {
  const numbered = shards.map((i) => ({
    input: inputs[i],
    n: Number(SHARD_NUMBER.exec(inputs[i].name)?.[1] ?? Number.NaN),
  }));
  if (numbered.every((s) => Number.isFinite(s.n))) {
    numbered.sort((a, b) => a.n - b.n);
    for (let k = 1; k < numbered.length; k++) {
      if (numbered[k].n !== numbered[k - 1].n + 1) {
        throw new StemflowError(
          'not-found',
          `Data file number ${numbered[k - 1].n + 1} is missing between ${numbered[k - 1].input.name} and ${numbered[k].input.name}`,
        );
      }
    }
  } else {
    numbered.sort((a, b) => a.input.name.localeCompare(b.input.name));
  }
  const first = numbered[0].input.name;
  return {
    kind: 'arina-shards',
    name: first.replace(SHARD_NUMBER, ''),
    parts: numbered.map(({ input }) => ({ input, dataset: '/entry/data/data' })),
    pixelMask: null,
    calibration: {},
    scanHint: null,
  };
}

function planFromSingle(input: InputFile, role: FileRole, dataset?: string): AcquisitionPlan {
  const single = role as Extract<FileRole, { kind: 'single' }>;
  const chosen = dataset ? single.candidates.find((c) => c.path === dataset) : single.candidates[0];
  if (!chosen) {
    throw new StemflowError(
      'not-found',
      `The dataset ${dataset} is not a 3D or 4D integer dataset in this file`,
      { file: input.name },
    );
  }
  return {
    kind: 'single',
    name: baseName(input.name).replace(/\.(h5|hdf5|nxs)$/i, ''),
    parts: [{ input, dataset: chosen.path }],
    pixelMask: single.pixelMaskPath ? { input, path: single.pixelMaskPath } : null,
    calibration: single.calibration,
    scanHint: chosen.shape.length === 4 ? [chosen.shape[0], chosen.shape[1]] : null,
  };
}

/** The scan shape: the user's, the stored one, a square, or the most square factorisation (a guess). */
export function chooseScan(
  frames: number,
  given: [number, number] | undefined,
  hint: [number, number] | null,
): { scan: [number, number]; fromMetadata: boolean } {
  if (given) {
    if (given[0] * given[1] !== frames || given[0] < 1 || given[1] < 1) {
      throw new StemflowError(
        'mismatch',
        `A scan of ${given[0]} x ${given[1]} positions needs ${given[0] * given[1]} frames, but the files hold ${frames}`,
      );
    }
    return { scan: given, fromMetadata: true };
  }
  if (hint && hint[0] * hint[1] === frames) return { scan: hint, fromMetadata: true };
  return { scan: mostSquareFactorisation(frames), fromMetadata: false };
}

export function mostSquareFactorisation(n: number): [number, number] {
  let rows = Math.floor(Math.sqrt(n));
  while (rows > 1 && n % rows !== 0) rows--;
  return [rows, n / rows];
}
