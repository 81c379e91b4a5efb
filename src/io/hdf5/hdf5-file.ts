import { StemflowError, throwIfAborted } from '../../errors';
import type { ByteSource } from '../byte-source';
import { readChunkTable } from './chunk-table';
import type { FileContext } from './context';
import { datasetFromHeader } from './dataset';
import { readGroupLinks } from './group';
import type { LinkInfo, NamedLink } from './messages/link';
import { type ObjectHeader, readObjectHeader } from './object-header';
import { readWholeDataset } from './read-dataset';
import { readSuperblock, type Superblock } from './superblock';
import type { ChunkDecoder, ChunkTable, DatasetInfo, Hdf5File } from './types';

const MAX_LINK_HOPS = 32;
const MAX_PATH_PARTS = 256;

/** Opens an HDF5 file for metadata and chunk-index reads. Only the bytes needed are read. */
export async function openHdf5(source: ByteSource, signal?: AbortSignal): Promise<Hdf5File> {
  const { superblock, ctx } = await readSuperblock(source, signal);
  return new Hdf5Reader(ctx, superblock);
}

class Hdf5Reader implements Hdf5File {
  private readonly headers = new Map<number, Promise<ObjectHeader>>();
  private readonly groups = new Map<number, Promise<NamedLink[] | null>>();

  constructor(
    private readonly ctx: FileContext,
    readonly superblock: Superblock,
  ) {}

  get source(): ByteSource {
    return this.ctx.source;
  }

  async getLink(path: string, signal?: AbortSignal): Promise<LinkInfo> {
    const parts = splitPath(this.ctx, path);
    if (parts.length === 0) return { kind: 'hard', address: this.superblock.rootObjectAddress };
    const parent = await this.resolve(parts.slice(0, -1), 0, signal);
    return this.child(parent, parts.slice(0, -1), parts[parts.length - 1], signal);
  }

  async listLinks(groupPath: string, signal?: AbortSignal): Promise<NamedLink[]> {
    const address = await this.resolve(splitPath(this.ctx, groupPath), 0, signal);
    const links = await this.links(address, signal);
    if (!links) throw this.ctx.error('not-found', `"${groupPath}" is not a group`);
    return links.map((l) => ({ ...l }));
  }

  async dataset(path: string, signal?: AbortSignal): Promise<DatasetInfo> {
    const address = await this.resolve(splitPath(this.ctx, path), 0, signal);
    return datasetFromHeader(this.ctx, path, await this.header(address, signal), signal);
  }

  chunkTable(ds: DatasetInfo, signal?: AbortSignal): Promise<ChunkTable> {
    return readChunkTable(this.ctx, ds, this.superblock.chunkK, signal);
  }

  readDataset(ds: DatasetInfo, decode: ChunkDecoder, signal?: AbortSignal): Promise<Uint8Array> {
    return readWholeDataset(this.ctx, ds, () => this.chunkTable(ds, signal), decode, signal);
  }

  private header(address: number, signal?: AbortSignal): Promise<ObjectHeader> {
    let p = this.headers.get(address);
    if (!p) {
      p = readObjectHeader(this.ctx, address, signal);
      p.catch(() => this.headers.delete(address));
      this.headers.set(address, p);
    }
    return p;
  }

  private links(address: number, signal?: AbortSignal): Promise<NamedLink[] | null> {
    let p = this.groups.get(address);
    if (!p) {
      p = this.header(address, signal).then((h) => readGroupLinks(this.ctx, this.superblock, h, signal));
      p.catch(() => this.groups.delete(address));
      this.groups.set(address, p);
    }
    return p;
  }

  private async child(
    groupAddress: number,
    at: string[],
    name: string,
    signal?: AbortSignal,
  ): Promise<LinkInfo> {
    const links = await this.links(groupAddress, signal);
    const where = '/' + at.join('/');
    if (!links) throw this.ctx.error('not-found', `"${where}" is not a group, so it has no member "${name}"`);
    const link = links.find((l) => l.name === name);
    if (!link) throw this.ctx.error('not-found', `There is no "${name}" in the group "${where}"`);
    const { name: _, ...info } = link;
    return info;
  }

  /** Follows a path from the root to an object address (hard and soft links; soft links at most 32 hops). */
  private async resolve(parts: string[], hops: number, signal?: AbortSignal): Promise<number> {
    let address = this.superblock.rootObjectAddress;
    for (let k = 0; k < parts.length; k++) {
      throwIfAborted(signal);
      const link = await this.child(address, parts.slice(0, k), parts[k], signal);
      if (link.kind === 'hard') address = link.address;
      else if (link.kind === 'soft') {
        if (hops >= MAX_LINK_HOPS) {
          throw this.ctx.error(
            'corrupt',
            `Too many soft links (a loop?) while opening "/${parts.join('/')}"`,
          );
        }
        const target = link.target.startsWith('/')
          ? splitPath(this.ctx, link.target)
          : [...parts.slice(0, k), ...splitPath(this.ctx, link.target)];
        address = await this.resolve(target, hops + 1, signal);
      } else {
        throw this.ctx.error(
          'not-found',
          `"/${parts.slice(0, k + 1).join('/')}" is an external link to "${link.path}" in the file "${link.file}"; open that file instead`,
        );
      }
    }
    return address;
  }
}

function splitPath(ctx: FileContext, path: string): string[] {
  const parts: string[] = [];
  for (const p of path.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') {
      if (parts.length === 0) throw ctx.error('invalid', `The path "${path}" leaves the root group`);
      parts.pop();
    } else parts.push(p);
  }
  if (parts.length > MAX_PATH_PARTS) throw new StemflowError('invalid', `The path "${path}" is too deep`);
  return parts;
}
