import type { File as H5File } from 'h5wasm';
import { openHdf5 } from '../io/hdf5';
import type { Calibration } from '../workers/acquisition-api';
import type { InputFile } from './input-file';
import { isDataset, isGroup, scalar, wrapH5wasm } from './metadata';

/** What one dropped file is, read from its metadata through h5wasm. */
export type FileRole =
  | {
      kind: 'master';
      links: MasterLink[];
      calibration: Calibration;
      pixelMaskPath: string | null;
      scanHint: [number, number] | null;
    }
  | { kind: 'shard'; dataset: string; shape: number[]; dtype: string }
  | { kind: 'single'; candidates: DatasetCandidate[]; calibration: Calibration; pixelMaskPath: string | null }
  | { kind: 'other' };

export interface MasterLink {
  /** The link name in the master, e.g. data_000001. */
  name: string;
  /** Target file name (as written in the link, without directories) and object path. */
  file: string;
  path: string;
}

export interface DatasetCandidate {
  path: string;
  shape: number[];
  dtype: string;
}

export const DATA_GROUP = '/entry/data';
const DETECTOR = '/entry/instrument/detector';
const PIXEL_MASK_PATHS = [`${DETECTOR}/detectorSpecific/pixel_mask`, `${DETECTOR}/pixel_mask`];
const MAX_WALK = 2000;
/** Groups deeper than this are not searched: a group that links to itself would otherwise be walked forever. */
const MAX_DEPTH = 8;

export async function classifyFile(input: InputFile): Promise<FileRole> {
  // Our reader checks the signature first: a file that is not HDF5 gets one clear sentence.
  await openHdf5(input.bytes);
  const handle = await input.openMetadata();
  try {
    return wrapH5wasm(input.name, () => classifyOpen(handle.file));
  } finally {
    handle.close();
  }
}

function classifyOpen(file: H5File): FileRole {
  const data = file.get(DATA_GROUP);
  if (isGroup(data)) {
    const names = data.keys();
    const links: MasterLink[] = [];
    for (const name of names.filter((n) => /^data_\d+$/.test(n)).sort()) {
      // get() follows the link when its target happens to be reachable; ask for the link itself.
      const link = data.get_external_link(`${DATA_GROUP}/${name}`) as Partial<{
        filename: string;
        obj_path: string;
      }>;
      if (link?.filename && link.obj_path)
        links.push({ name, file: baseName(link.filename), path: link.obj_path });
    }
    if (links.length > 0) {
      return {
        kind: 'master',
        links,
        calibration: readCalibration(file),
        pixelMaskPath: findPixelMask(file),
        scanHint: readScanHint(file),
      };
    }
    const ds = data.get('data');
    if (isDataset(ds) && ds.shape?.length === 3 && isIntegerDtype(ds.dtype)) {
      return { kind: 'shard', dataset: `${DATA_GROUP}/data`, shape: ds.shape, dtype: String(ds.dtype) };
    }
  }
  const candidates = findCandidates(file);
  if (candidates.length === 0) return { kind: 'other' };
  return {
    kind: 'single',
    candidates,
    calibration: readCalibration(file),
    pixelMaskPath: findPixelMask(file),
  };
}

/** Integer datasets of rank 3 or 4 anywhere in the file (breadth-first, bounded), largest first. */
function findCandidates(file: H5File): DatasetCandidate[] {
  const out: DatasetCandidate[] = [];
  const queue = ['/'];
  let visited = 0;
  while (queue.length > 0 && visited < MAX_WALK) {
    const path = queue.shift()!;
    const group = file.get(path);
    if (!isGroup(group)) continue;
    for (const name of group.keys()) {
      if (++visited > MAX_WALK) break;
      const child = `${path === '/' ? '' : path}/${name}`;
      const type = group.get_type(name);
      // get_type: 0 = group, 1 = dataset (H5O_type_t); links to other files are not followed here.
      if (type === 0 && child.split('/').length - 1 < MAX_DEPTH) queue.push(child);
      else if (type === 1) {
        const ds = file.get(child);
        if (
          isDataset(ds) &&
          ds.shape &&
          (ds.shape.length === 3 || ds.shape.length === 4) &&
          isIntegerDtype(ds.dtype)
        ) {
          out.push({ path: child, shape: ds.shape, dtype: String(ds.dtype) });
        }
      }
    }
  }
  const count = (c: DatasetCandidate) => c.shape.reduce((a, b) => a * b, 1);
  return out.sort((a, b) => count(b) - count(a) || a.path.localeCompare(b.path));
}

function isIntegerDtype(dtype: unknown): boolean {
  // h5wasm dtype strings follow numpy/struct style: '<H' (uint16), '<B', '<I', '|u1', ...
  return typeof dtype === 'string' && /^[<>|=]?(B|H|I|u1|u2|u4)$/.test(dtype);
}

function findPixelMask(file: H5File): string | null {
  for (const path of PIXEL_MASK_PATHS) if (isDataset(file.get(path))) return path;
  return null;
}

function readNumber(file: H5File, path: string): number | undefined {
  const ds = file.get(path);
  return isDataset(ds) ? scalar(ds.value) : undefined;
}

function readCalibration(file: H5File): Calibration {
  const cal: Calibration = {};
  const x = readNumber(file, `${DETECTOR}/x_pixel_size`);
  const y = readNumber(file, `${DETECTOR}/y_pixel_size`);
  if (x !== undefined && y !== undefined) cal.detectorPixelSize = [x, y];
  const distance = readNumber(file, `${DETECTOR}/detector_distance`);
  if (distance !== undefined) cal.detectorDistance = distance;
  const bx = readNumber(file, `${DETECTOR}/beam_center_x`);
  const by = readNumber(file, `${DETECTOR}/beam_center_y`);
  if (bx !== undefined && by !== undefined) cal.beamCenter = [bx, by];
  const countTime = readNumber(file, `${DETECTOR}/count_time`);
  if (countTime !== undefined) cal.countTime = countTime;
  const wavelength = readWithUnits(file, '/entry/instrument/beam/incident_wavelength');
  if (wavelength !== undefined && wavelength > 0) cal.wavelength = wavelength;
  const voltage =
    readNumber(file, '/entry/instrument/source/voltage') ??
    readNumber(file, '/entry/instrument/beam/voltage');
  if (voltage !== undefined) cal.voltage = voltage;
  else if (cal.wavelength !== undefined) cal.voltage = voltageFromWavelength(cal.wavelength);
  return cal;
}

const LENGTH_UNITS: Record<string, number> = {
  m: 1,
  nm: 1e-9,
  angstrom: 1e-10,
  A: 1e-10,
  Å: 1e-10,
  pm: 1e-12,
};

/** A scalar length in metres, using the dataset's `units` attribute (metres when absent). */
function readWithUnits(file: H5File, path: string): number | undefined {
  const ds = file.get(path);
  if (!isDataset(ds)) return undefined;
  const value = scalar(ds.value);
  const units = ds.attrs.units?.value;
  const factor = typeof units === 'string' ? LENGTH_UNITS[units] : 1;
  return value === undefined || factor === undefined ? undefined : value * factor;
}

/** Accelerating voltage (V) of electrons of relativistic wavelength `lambda` (m), rounded to 1 V. */
export function voltageFromWavelength(lambda: number): number {
  const h = 6.62607015e-34;
  const m = 9.1093837015e-31;
  const e = 1.602176634e-19;
  const c = 299792458;
  // lambda = h / sqrt(2 m e V (1 + e V / (2 m c^2)))  =>  (e^2/c^2) V^2 + 2 m e V - (h/lambda)^2 = 0
  const p2 = (h / lambda) ** 2;
  const a = (e * e) / (c * c);
  const b = 2 * m * e;
  return Math.round((-b + Math.sqrt(b * b + 4 * a * p2)) / (2 * a));
}

/** A scan shape stored by the acquisition software, when present (not part of the Dectris schema). */
function readScanHint(file: H5File): [number, number] | null {
  for (const base of ['/entry/instrument/scan', '/entry/scan']) {
    const rows = readNumber(file, `${base}/rows`) ?? readNumber(file, `${base}/scan_rows`);
    const cols = readNumber(file, `${base}/cols`) ?? readNumber(file, `${base}/scan_cols`);
    if (rows && cols && Number.isInteger(rows) && Number.isInteger(cols)) return [rows, cols];
  }
  return null;
}

export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1];
}
