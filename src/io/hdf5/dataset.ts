import type { FileContext } from './context';
import { parseLayout } from './messages/data-layout';
import { parseDataspace } from './messages/dataspace';
import { type Dtype, parseDatatype } from './messages/datatype';
import { parseFillValue, parseOldFillValue } from './messages/fill-value';
import { type FilterInfo, parseFilterPipeline } from './messages/filter-pipeline';
import { findMessage, type HeaderMessage, MSG, type ObjectHeader, readObjectHeader } from './object-header';
import type { DatasetInfo } from './types';

/** Builds a DatasetInfo from an object header; throws 'not-found' when the object is not a dataset. */
export async function datasetFromHeader(
  ctx: FileContext,
  path: string,
  header: ObjectHeader,
  signal?: AbortSignal,
): Promise<DatasetInfo> {
  const layoutMsg = findMessage(header, MSG.layout);
  const spaceMsg = findMessage(header, MSG.dataspace);
  const typeMsg = findMessage(header, MSG.datatype);
  if (!layoutMsg || !spaceMsg || !typeMsg) {
    throw ctx.error('not-found', `"${path}" is not a dataset (it may be a group)`, header.address);
  }
  const cur = (m: HeaderMessage, what: string) => ctx.cursor(m.data, m.address, what);
  const space = parseDataspace(cur(await unshare(ctx, spaceMsg, MSG.dataspace, signal), 'dataspace message'));
  const dt = parseDatatype(cur(await unshare(ctx, typeMsg, MSG.datatype, signal), 'datatype message'));
  if ('unsupported' in dt) {
    throw ctx.error('unsupported', `The dataset "${path}" holds ${dt.unsupported}, which is not supported`);
  }
  const storage = parseLayout(cur(layoutMsg, 'data layout message'));
  if (storage.kind === 'virtual') {
    throw ctx.error('unsupported', `The dataset "${path}" is a virtual dataset, which is not supported`);
  }
  const pipeline = findMessage(header, MSG.filterPipeline);
  const filters: FilterInfo[] = pipeline
    ? parseFilterPipeline(
        cur(await unshare(ctx, pipeline, MSG.filterPipeline, signal), 'filter pipeline message'),
      )
    : [];
  const fillNew = findMessage(header, MSG.fillValue);
  const fillOld = findMessage(header, MSG.fillValueOld);
  let fillValue: Uint8Array | null = null;
  if (fillNew)
    fillValue = parseFillValue(cur(await unshare(ctx, fillNew, MSG.fillValue, signal), 'fill value message'));
  else if (fillOld) fillValue = parseOldFillValue(cur(fillOld, 'fill value message'));
  if (fillValue && fillValue.length !== dt.size) fillValue = null;
  const dtype: Dtype = dt;
  if (storage.chunkShape && storage.chunkShape.length !== space.shape.length) {
    throw ctx.error('corrupt', `The chunks of "${path}" do not have the rank of the dataset`, header.address);
  }
  if (storage.kind === 'contiguous' && storage.size < 0) {
    storage.size = space.shape.reduce((a, b) => a * b, dtype.size);
  }
  return {
    path,
    address: header.address,
    shape: space.shape,
    maxShape: space.maxShape,
    dtype,
    layout: storage.kind,
    chunkShape: storage.chunkShape,
    filters,
    chunkIndex: storage.index,
    fillValue,
    contiguousAddress:
      storage.kind === 'contiguous' ? (storage.address < 0 ? -1 : ctx.abs(storage.address)) : undefined,
    storage,
  };
}

/** A shared message (flag bit 1) lives in another object header (a committed datatype); fetch it. */
async function unshare(
  ctx: FileContext,
  m: HeaderMessage,
  type: number,
  signal?: AbortSignal,
): Promise<HeaderMessage> {
  if (!(m.flags & 2)) return m;
  const c = ctx.cursor(m.data, m.address, 'shared message');
  const version = c.u8();
  let address: number;
  if (version === 1) {
    c.skip(7);
    address = c.offset();
  } else if (version === 2 || version === 3) {
    const kind = c.u8();
    if (version === 3 && kind !== 2) {
      throw ctx.error(
        'unsupported',
        'A message stored in the shared-message heap is not supported',
        m.address,
      );
    }
    address = c.offset();
  } else return c.fail(`Unknown shared message version ${version}`);
  const target = await readObjectHeader(ctx, address, signal);
  const found = findMessage(target, type);
  if (!found || found.flags & 2)
    throw ctx.error('corrupt', 'A shared message points to nothing usable', m.address);
  return found;
}
