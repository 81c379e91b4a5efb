import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Test-only access to the committed fixtures and their h5py oracle (scripts/make_fixtures.py). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const DEMO = join(ROOT, 'public', 'demo');

export interface OracleDataset {
  shape: number[];
  maxshape: (number | null)[];
  dtype: string;
  chunks: number[] | null;
  layout: 'chunked' | 'contiguous' | 'compact';
  index: string | null;
  filters: { id: number; cd_values: number[] }[];
  num_chunks: number | null;
  chunk_info: [number[], number, number, number][] | null;
  readable?: boolean;
  expected_error?: string;
  sha256?: string;
  frame_sums?: number[];
  max?: number;
  count_gt_255?: number;
  count_eq_65535?: number;
}

export interface OracleAcquisition {
  master: string;
  shards: string[];
  dataset: string;
  scan: [number, number];
  detector: [number, number];
  dtype: string;
  frames: number;
  sha256: string;
  frame_sums: number[];
  max: number;
  count_gt_255: number;
  count_eq_65535: number;
  pixel_mask: { path: string; flagged: number; sha256: string; flagged_indices: number[] };
  unflagged: { max: number; count_gt_255: number; frame_sums: number[] };
  calibration: Record<string, number>;
}

export interface Oracle {
  files: Record<
    string,
    {
      size: number;
      sha256: string;
      datasets: Record<string, OracleDataset>;
      external_links?: Record<string, [string, string]>;
    }
  >;
  acquisitions: Record<string, OracleAcquisition>;
}

export function loadOracle(dir = FIXTURES): Oracle {
  return JSON.parse(readFileSync(join(dir, 'oracle.json'), 'utf8')) as Oracle;
}

export const fixture = (name: string) => join(FIXTURES, name);
