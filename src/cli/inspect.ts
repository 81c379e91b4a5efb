import type { Entity, File as H5File } from 'h5wasm';
import { isStemflowError } from '../errors';
import { openHdf5 } from '../io/hdf5';
import { openAcquisition } from '../source/hdf5-acquisition';
import type { InputFile } from '../source/input-file';
import { isDataset, isGroup, wrapH5wasm } from '../source/metadata';
import { closeInputs, openInputs } from './inputs';

const FIRST_CHUNKS = 4;
const MAX_OBJECTS = 5000;

interface DatasetReport {
  path: string;
  shape: number[];
  dtype: string;
  filters: { id: number; name?: string; cdValues: number[] }[];
  layout: string;
  chunks: number[] | null;
  chunkIndex: string | null;
  numChunks?: number;
  firstChunks?: { index: number; offset: number; size: number; filterMask: number }[];
  error?: string;
}

interface FileReport {
  name: string;
  size: number;
  superblockVersion?: number;
  datasets: DatasetReport[];
  externalLinks: { path: string; file: string; target: string }[];
  error?: string;
}

export async function inspectCommand(paths: string[], { json }: { json: boolean }): Promise<number> {
  const inputs = await openInputs(paths);
  try {
    const files = await Promise.all(inputs.map(inspectFile));
    let acquisition: unknown = null;
    try {
      const source = await openAcquisition(inputs);
      acquisition = source.summary;
    } catch (e) {
      acquisition = { error: isStemflowError(e) ? e.message : String(e) };
    }
    if (json) process.stdout.write(`${JSON.stringify({ files, acquisition }, null, 2)}\n`);
    else process.stdout.write(formatText(files, acquisition));
    return files.some((f) => f.error) ? 1 : 0;
  } finally {
    await closeInputs(inputs);
  }
}

async function inspectFile(input: InputFile): Promise<FileReport> {
  const report: FileReport = { name: input.name, size: input.size, datasets: [], externalLinks: [] };
  try {
    const hdf5 = await openHdf5(input.bytes);
    report.superblockVersion = hdf5.superblock.version;
    const handle = await input.openMetadata();
    try {
      const objects = wrapH5wasm(input.name, () => walk(handle.file));
      for (const { path, entity } of objects) {
        if (entity instanceof ExternalLinkEntry) {
          report.externalLinks.push({ path, file: entity.filename, target: entity.obj_path });
        } else if (isDataset(entity)) report.datasets.push(await inspectDataset(hdf5, path, entity));
      }
    } finally {
      handle.close();
    }
  } catch (e) {
    report.error = isStemflowError(e) ? e.message : String(e);
  }
  return report;
}

async function inspectDataset(
  hdf5: Awaited<ReturnType<typeof openHdf5>>,
  path: string,
  entity: Entity,
): Promise<DatasetReport> {
  const h5 = entity as unknown as { shape: number[] | null; dtype: unknown };
  const report: DatasetReport = {
    path,
    shape: h5.shape ?? [],
    dtype: String(h5.dtype),
    filters: [],
    layout: '?',
    chunks: null,
    chunkIndex: null,
  };
  if (!/^[<>|=]?[BHIQbhiqfdeu]\d*$/.test(report.dtype)) return report; // strings, compounds: metadata only
  try {
    const info = await hdf5.dataset(path);
    report.filters = info.filters.map((f) => ({ id: f.id, name: f.name, cdValues: f.cdValues }));
    report.layout = info.layout;
    report.chunks = info.chunkShape;
    report.chunkIndex = info.chunkIndex;
    if (info.layout === 'chunked') {
      const table = await hdf5.chunkTable(info);
      report.numChunks = table.address.reduce((n, a) => n + (a >= 0 ? 1 : 0), 0);
      report.firstChunks = [];
      for (let i = 0; i < table.address.length && report.firstChunks.length < FIRST_CHUNKS; i++) {
        if (table.address[i] >= 0) {
          report.firstChunks.push({
            index: i,
            offset: table.address[i],
            size: table.size[i],
            filterMask: table.filterMask[i],
          });
        }
      }
    }
  } catch (e) {
    report.error = isStemflowError(e) ? e.message : String(e);
  }
  return report;
}

class ExternalLinkEntry {
  constructor(
    readonly filename: string,
    readonly obj_path: string,
  ) {}
}

/** Every object below the root, breadth-first, without following links to other files. */
function walk(file: H5File): { path: string; entity: Entity | ExternalLinkEntry | null }[] {
  const out: { path: string; entity: Entity | ExternalLinkEntry | null }[] = [];
  const queue = ['/'];
  while (queue.length > 0 && out.length < MAX_OBJECTS) {
    const path = queue.shift()!;
    const group = file.get(path);
    if (!isGroup(group)) continue;
    for (const name of group.keys()) {
      const child = `${path === '/' ? '' : path}/${name}`;
      // get() would follow an external link whose target is reachable; report the link itself.
      const link = group.get_external_link(child) as Partial<{ filename: string; obj_path: string }>;
      const entity = link?.filename
        ? new ExternalLinkEntry(link.filename, link.obj_path ?? '')
        : group.get(name);
      out.push({ path: child, entity });
      if (!(entity instanceof ExternalLinkEntry) && isGroup(entity)) queue.push(child);
    }
  }
  return out;
}

function formatText(files: FileReport[], acquisition: unknown): string {
  const lines: string[] = [];
  for (const f of files) {
    lines.push(
      `${f.name}  ${f.size} bytes${f.superblockVersion === undefined ? '' : `  superblock v${f.superblockVersion}`}`,
    );
    if (f.error) lines.push(`  error: ${f.error}`);
    for (const d of f.datasets) {
      const filters = d.filters.length
        ? d.filters.map((x) => `${x.name ?? x.id}(${x.cdValues.join(',')})`).join('+')
        : 'none';
      lines.push(
        `  ${d.path}  ${d.shape.join('x')} ${d.dtype}  ${d.layout}${d.chunks ? ` chunks ${d.chunks.join('x')}` : ''}  filters ${filters}`,
      );
      if (d.chunkIndex) lines.push(`    index ${d.chunkIndex}, ${d.numChunks} chunks`);
      for (const c of d.firstChunks ?? [])
        lines.push(`    chunk ${c.index}: offset ${c.offset} size ${c.size} mask ${c.filterMask}`);
      if (d.error) lines.push(`    error: ${d.error}`);
    }
    for (const l of f.externalLinks) lines.push(`  ${l.path} -> ${l.file}:${l.target}`);
  }
  lines.push('', `acquisition: ${JSON.stringify(acquisition, null, 2)}`);
  return `${lines.join('\n')}\n`;
}
