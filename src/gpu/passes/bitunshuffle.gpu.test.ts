import { describe, expect } from 'vitest';
import { bitshuffle, bitunshuffle, type ElemSize } from '../../kernels/bitunshuffle.ts';
import { fullRange, sparseCounts } from '../test-data.ts';
import { type GpuTestContext, withGpu } from '../test-harness.ts';
import { createBitunshufflePass } from './bitunshuffle.ts';

type Values = Uint8Array | Uint16Array | Uint32Array;

// The pure-TS codec is optional here: compared with whenever it exists.
const codecModules = import.meta.glob<{
  bitunshuffle?: (src: Uint8Array, es: number, block: number) => Uint8Array;
}>('../../codec/bitshuffle.ts');
const loadCodec = Object.values(codecModules)[0];

interface Case {
  frames: number;
  frameElems: number;
  blockElems: number;
  values: Values;
  maxGroupsPerDispatch?: number;
}

function elemSizeOf(values: Values): ElemSize {
  return values.BYTES_PER_ELEMENT as ElemSize;
}

/** Shuffles `values` on the CPU, unshuffles on the GPU and requires the original values exactly. */
async function check(ctx: GpuTestContext, c: Case): Promise<Uint32Array> {
  const elemSize = elemSizeOf(c.values);
  const shape = { frameElems: c.frameElems, frameCount: c.frames, elemSize, blockElems: c.blockElems };
  const shuffled = bitshuffle(c.values, shape);
  const twin = bitunshuffle(shuffled, shape);
  const expected = Uint32Array.from(c.values);
  expect(twin).toEqual(expected);

  const pass = createBitunshufflePass(ctx.device, { elemSize });
  const input = ctx.upload(shuffled);
  const output = ctx.storage(expected.byteLength);
  pass.run({ ...shape, shuffled: input, values: output, maxGroupsPerDispatch: c.maxGroupsPerDispatch });
  const gpu = await ctx.readBack(output, Uint32Array);
  expectSame(gpu, expected);
  return gpu;
}

function expectSame(actual: Uint32Array, expected: Uint32Array): void {
  expect(actual.length).toBe(expected.length);
  const bad = actual.findIndex((v, i) => v !== expected[i]);
  expect(bad === -1 ? 'identical' : `first difference at ${bad}: ${actual[bad]} != ${expected[bad]}`).toBe(
    'identical',
  );
}

describe('bitunshuffle pass', () => {
  withGpu('192x192 uint16 sparse counts, 4 frames of 9 full blocks', async (ctx) => {
    await check(ctx, {
      frames: 4,
      frameElems: 192 * 192,
      blockElems: 4096,
      values: sparseCounts(4, 192, 192, 1),
    });
  });

  withGpu('96x96 uint16, 6 frames (2 blocks of 4096 + a short block of 1024)', async (ctx) => {
    await check(ctx, {
      frames: 6,
      frameElems: 96 * 96,
      blockElems: 4096,
      values: sparseCounts(6, 96, 96, 2),
    });
  });

  withGpu('33x35 uint16 full range: short block of 1152 and a raw tail of 3', async (ctx) => {
    await check(ctx, {
      frames: 5,
      frameElems: 33 * 35,
      blockElems: 4096,
      values: fullRange(Uint16Array, 5 * 1155, 3),
    });
  });

  withGpu('33x35 uint8 full range, frames at odd byte offsets', async (ctx) => {
    await check(ctx, {
      frames: 7,
      frameElems: 1155,
      blockElems: 8192,
      values: fullRange(Uint8Array, 7 * 1155, 4),
    });
  });

  withGpu('96x96 uint32 full range (values above 2^31), blocks of 2048', async (ctx) => {
    const values = fullRange(Uint32Array, 3 * 9216, 5);
    expect(values.some((v) => v >= 2 ** 31)).toBe(true);
    await check(ctx, { frames: 3, frameElems: 9216, blockElems: 2048, values });
  });

  withGpu('uint32 odd frame of 1155 with a tail, small blocks', async (ctx) => {
    await check(ctx, {
      frames: 3,
      frameElems: 1155,
      blockElems: 128,
      values: fullRange(Uint32Array, 3 * 1155, 6),
    });
  });

  withGpu('frames split across many small dispatches', async (ctx) => {
    // 145 groups per frame, 128 groups per dispatch: every dispatch boundary cuts a frame.
    await check(ctx, {
      frames: 20,
      frameElems: 1155,
      blockElems: 256,
      values: sparseCounts(20, 33, 35, 7),
      maxGroupsPerDispatch: 128,
    });
  });

  withGpu('frame smaller than one block, 7 elements (tail only)', async (ctx) => {
    await check(ctx, { frames: 9, frameElems: 7, blockElems: 4096, values: fullRange(Uint16Array, 63, 8) });
  });

  withGpu('golden vectors from the bitshuffle library (python bitshuffle 0.5)', async (ctx) => {
    for (const g of GOLDEN) {
      const shape = {
        frameElems: g.values.length,
        frameCount: 1,
        elemSize: elemSizeOf(g.values),
        blockElems: g.block,
      };
      const shuffled = hex(g.shuffled);
      expect(bitshuffle(g.values, shape)).toEqual(shuffled);
      const pass = createBitunshufflePass(ctx.device, { elemSize: shape.elemSize });
      const output = ctx.storage(g.values.length * 4);
      pass.run({ ...shape, shuffled: ctx.upload(shuffled), values: output });
      expectSame(await ctx.readBack(output, Uint32Array), Uint32Array.from(g.values));
    }
  });
});

describe.skipIf(!loadCodec)('bitunshuffle pass vs src/codec/bitshuffle.ts', () => {
  withGpu('96x96 uint16 and 33x35 uint32 agree with the codec', async (ctx) => {
    const codec = await loadCodec!();
    expect(typeof codec.bitunshuffle).toBe('function');
    const cases: Case[] = [
      { frames: 3, frameElems: 9216, blockElems: 4096, values: sparseCounts(3, 96, 96, 9) },
      { frames: 2, frameElems: 1155, blockElems: 2048, values: fullRange(Uint32Array, 2310, 10) },
    ];
    for (const c of cases) {
      const es = elemSizeOf(c.values);
      const shuffled = bitshuffle(c.values, {
        frameElems: c.frameElems,
        frameCount: c.frames,
        elemSize: es,
        blockElems: c.blockElems,
      });
      const gpu = await check(ctx, c);
      for (let f = 0; f < c.frames; f++) {
        const frameBytes = shuffled.subarray(f * c.frameElems * es, (f + 1) * c.frameElems * es);
        const raw = codec.bitunshuffle!(frameBytes, es, c.blockElems);
        const type = c.values.constructor as new (b: ArrayBuffer) => Values;
        const decoded = new type(raw.slice().buffer);
        expectSame(gpu.subarray(f * c.frameElems, (f + 1) * c.frameElems), Uint32Array.from(decoded));
      }
    }
  });
});

function hex(s: string): Uint8Array {
  return Uint8Array.from(s.match(/../g)!.map((b) => Number.parseInt(b, 16)));
}

// bitshuffle.bitshuffle(values, block) from the bitshuffle library (Debian package `bitshuffle`): 45 uint16
// values in blocks of 16 (2 full blocks, a short block of 8, a raw tail of 5), and 21 uint32 values in
// blocks of 8 (2 blocks, tail of 5).
const GOLDEN = [
  {
    block: 16,
    values: Uint16Array.from({ length: 45 }, (_, i) => (i * 1499 + 7) % 65536),
    shuffled:
      '55553333a5a56c931c8f562a32990e87fe8054d532b3a42538c6c00700f8000055553333a5a56c93e370b55a6c36e3f11ff0aa5a99c92d6d' +
      '318e3ef03f00c0ff5533a56c1ca99b780755cc697181feff3fea1af0f5f5d0fbab01',
  },
  {
    block: 8,
    values: Uint32Array.from({ length: 21 }, (_, i) => Number((BigInt(i) * 2654435761n) % 2n ** 32n)),
    shuffled:
      'aaccf000aa66b4928ed4184ac63efe54320efe54320e5498e0aa661efe54984aaaccf0ffaa66b46de34a732918f80755330f0055330faa33' +
      'c356ce3e0155994b109b77e3c114af81728ee61f23081ebed481555c',
  },
];
