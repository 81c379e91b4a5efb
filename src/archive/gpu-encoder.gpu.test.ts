import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStemflowError, StemflowError } from '../errors';
import { trackBuffers, withGpu } from '../gpu/test-harness';
import type { AcquisitionSource } from '../source/acquisition-source';
import { fixture, loadOracle } from '../testing/fixtures';
import { type CodecParams, convertArchive, cpuRecordEncoder, type RecordEncoder } from './convert';
import { gpuRecordEncoder } from './gpu-encoder';
import { laneGeometry } from './lanes';
import { nodeArchiveTarget, nodeSha256 } from './node-folder';
import { openSource, tempDir } from './testing';

const arina = loadOracle().acquisitions.arina;
const arinaPaths = [arina.master, ...arina.shards].map(fixture);
const small: Partial<CodecParams> = { recordFrames: 7, lanesPerFrame: 3, classes: 8, blockFrames: 3 };
const fixedDate = () => new Date('2026-11-29T00:00:00Z');

async function convertWith(
  paths: string[],
  encoder: RecordEncoder,
  codec: Partial<CodecParams>,
  options: { dataset?: string } = {},
  writesInFlight?: number,
) {
  const { source, close } = await openSource(paths, options);
  const dir = join(await tempDir(), 'archive');
  try {
    await convertArchive([{ name: 'a', source, sources: [] }], await nodeArchiveTarget(dir), {
      hash: nodeSha256,
      encoder,
      codec,
      now: fixedDate,
      writesInFlight,
    });
  } finally {
    await close();
  }
  return readFile(join(dir, 'manifest.json'), 'utf8');
}

/** Encode parameters for 7-frame records of `source` (uint16, 3 lanes a frame, 8 classes). */
function recordParams(source: AcquisitionSource) {
  const [rows, cols] = source.summary.detector;
  return {
    dtype: 'uint16' as const,
    geometry: laneGeometry(rows * cols, 3),
    cols,
    tableLog: 11,
    classes: 8,
  };
}

async function expectError(p: Promise<unknown>, kind: string, text: RegExp) {
  const error = await p.then(
    () => null,
    (e) => e,
  );
  expect(isStemflowError(error), String(error)).toBe(true);
  expect(error.kind).toBe(kind);
  expect(error.message).toMatch(text);
}

describe('gpuRecordEncoder: archives byte-identical to the CPU twins', () => {
  const cases: [string, string[], { dataset?: string }, Partial<CodecParams>][] = [
    ['ARINA master + 3 shards (uint16), 7-frame records', arinaPaths, {}, small],
    ['ARINA, one record of every frame, 4 lanes, 32 classes', arinaPaths, {}, { recordFrames: 1000 }],
    ['uint32 with counts up to 2^32 - 1', [fixture('many_fixed_u32_32.h5')], { dataset: '/data' }, small],
    ['uint8', [fixture('many_v1_u8_32.h5')], { dataset: '/data' }, { ...small, tableLog: 9 }],
    ['odd 33x35 detector', [fixture('odd_u16_33x35.h5')], {}, { ...small, lanesPerFrame: 5 }],
  ];
  for (const [name, paths, options, codec] of cases) {
    withGpu(
      `${name}: same manifest (every file's SHA-256, the audit), every buffer freed`,
      async ({ device }) => {
        const tracked = trackBuffers(device);
        try {
          const cpu = await convertWith(paths, cpuRecordEncoder, codec, options);
          const encoder = gpuRecordEncoder(device);
          // The converter recycles each record's words after writing them: at most the records in flight
          // (slots + 1 reading ahead) + the converter's writes in flight (2) + 1 host arrays.
          const buffers = new Set<ArrayBufferLike>();
          const watched: RecordEncoder = {
            encode: async (...args) => {
              const record = await encoder.encode(...args);
              buffers.add(record.words.buffer);
              return record;
            },
            recycle: (record) => encoder.recycle?.(record),
          };
          const gpu = await convertWith(paths, watched, codec, options);
          expect(buffers.size).toBeLessThanOrEqual(6);
          await encoder.dispose();
          expect(gpu).toBe(cpu);
          expect(JSON.parse(gpu).files.length).toBeGreaterThanOrEqual(2);
          expect(encoder.timings.records).toBe(JSON.parse(gpu).acquisitions[0].records.length);
          expect(tracked.createdLabels()).toContain('bslz4-decode scratch');
          expect(tracked.alive()).toBe(0);
        } finally {
          tracked.stop();
        }
      },
      240_000,
    );
  }

  withGpu(
    'without prefetch, in profile mode, with 3 records in flight, compacted apart from the values: the same archive',
    async ({ device }) => {
      const paths = [fixture('many_fixed_u32_32.h5')];
      const cpu = await convertWith(paths, cpuRecordEncoder, small, { dataset: '/data' });
      const encoder = gpuRecordEncoder(device, { prefetch: false, profile: true });
      const gpu = await convertWith(paths, encoder, small, { dataset: '/data' });
      await encoder.dispose();
      expect(gpu).toBe(cpu);
      const tracked = trackBuffers(device);
      try {
        const deep = gpuRecordEncoder(device, { slots: 3 });
        expect(await convertWith(paths, deep, small, { dataset: '/data' })).toBe(cpu);
        // Slots 1 and 2 were created once the first record's decode was submitted.
        expect(deep.timings.laterSlotsMs).toBeGreaterThan(0);
        await deep.dispose();
        // The path of records whose words exceed their raw size: a record output of the slot's own.
        const apart = gpuRecordEncoder(device, { compactApart: true });
        expect(await convertWith(paths, apart, small, { dataset: '/data' })).toBe(cpu);
        await apart.dispose();
        expect(tracked.createdLabels()).toContain('encoder record output');
        expect(tracked.createdLabels().filter((l) => l.includes('record output')).length).toBe(2);
        expect(tracked.alive()).toBe(0);
      } finally {
        tracked.stop();
      }
      expect(encoder.timings.sumsMs).toBeGreaterThan(0);
      expect(encoder.timings.compactMs).toBeGreaterThan(0);
    },
    240_000,
  );

  withGpu(
    'lent readbacks (written without a host copy, hashed from the file): the same archive with 0, 2 and 4 shards in flight, every buffer freed',
    async ({ device }) => {
      const cpu = await convertWith(arinaPaths, cpuRecordEncoder, small);
      for (const [lend, writes] of [
        [3, 2],
        [1, 4],
        [2, 0],
      ]) {
        const tracked = trackBuffers(device);
        try {
          const encoder = gpuRecordEncoder(device, { slots: 3, lendReadbacks: lend });
          expect(await convertWith(arinaPaths, encoder, small, {}, writes)).toBe(cpu);
          expect(encoder.timings.lentRecords).toBeGreaterThan(0);
          expect(encoder.timings.timeline.filter((l) => l.lent).length).toBe(encoder.timings.lentRecords);
          await encoder.dispose();
          expect(tracked.alive()).toBe(0);
        } finally {
          tracked.stop();
        }
      }
    },
    240_000,
  );

  withGpu(
    'every record lent (lentOnly): records wait for a readback instead of copying; the same archive, every buffer freed',
    async ({ device }) => {
      const cpu = await convertWith(arinaPaths, cpuRecordEncoder, small);
      for (const [slots, lend, writes] of [
        [2, 2, 4],
        [3, 3, 0],
        [2, 3, 2],
      ]) {
        const tracked = trackBuffers(device);
        try {
          const encoder = gpuRecordEncoder(device, { slots, lendReadbacks: lend, lentOnly: true });
          expect(await convertWith(arinaPaths, encoder, small, {}, writes)).toBe(cpu);
          const lines = encoder.timings.timeline;
          expect(lines.length).toBeGreaterThan(slots + 1);
          // No record copied: every one was lent, with no readback of a slot's own.
          expect(lines.every((l) => l.lent && l.copyMs === 0)).toBe(true);
          expect(encoder.timings.lentRecords).toBe(lines.length);
          expect(encoder.timings.hostCopyMs).toBe(0);
          await encoder.dispose();
          expect(tracked.alive()).toBe(0);
        } finally {
          tracked.stop();
        }
      }
    },
    240_000,
  );

  it('lentOnly needs a lent readback per record slot', () => {
    const error = (() => {
      try {
        gpuRecordEncoder({} as GPUDevice, { slots: 3, lendReadbacks: 2, lentOnly: true });
      } catch (e) {
        return e;
      }
    })();
    expect(isStemflowError(error) && error.kind).toBe('invalid');
    expect(String(error)).toMatch(/at least 3 lent readback\(s\), one per record slot \(2 asked\)/);
  });

  withGpu(
    'lentOnly: records waiting for loans a caller never gives back are copied when the encoder is disposed',
    async ({ device }) => {
      const tracked = trackBuffers(device);
      const { source, close } = await openSource(arinaPaths);
      try {
        const params = recordParams(source);
        const encoder = gpuRecordEncoder(device, { slots: 2, lendReadbacks: 2, lentOnly: true });
        // Both loans kept: the prefetched records 2 and 3 can only wait for one.
        const first = await encoder.encode(source, 0, 7, params);
        const second = await encoder.encode(source, 7, 7, params);
        expect([first.lent, second.lent]).toEqual([true, true]);
        const kept = [first.words.slice(), second.words.slice()];
        // Record 2 waits for a loan, holding the shared lane scratch; record 3 waits for the lane scratch.
        for (let i = 0; i < 1000 && encoder.loanWaiters < 1; i++) await new Promise((r) => setTimeout(r, 20));
        expect(encoder.loanWaiters).toBe(1);
        await encoder.dispose(); // would hang if the waiting records were not released
        const lines = encoder.timings.timeline;
        expect(lines.filter((l) => l.lent).length).toBe(2);
        expect(lines.length).toBe(4);
        const byFrame = (f: number) => lines.find((l) => l.firstFrame === f);
        expect(byFrame(14)?.lent).toBe(false);
        expect(byFrame(14)?.loanWaitMs).toBeGreaterThan(0);
        expect(byFrame(21)?.lent).toBe(false);
        expect(encoder.loanWaiters).toBe(0);
        expect(tracked.alive()).toBe(2); // the two loans, still mapped
        expect([first.words, second.words]).toEqual(kept);
        encoder.recycle(first);
        encoder.recycle(second);
        expect(tracked.alive()).toBe(0);
      } finally {
        tracked.stop();
        await close();
      }
    },
    240_000,
  );

  withGpu(
    'a lent record kept past dispose stays mapped; its readback is freed when given back',
    async ({ device }) => {
      const tracked = trackBuffers(device);
      const { source, close } = await openSource(arinaPaths);
      try {
        const params = recordParams(source);
        const encoder = gpuRecordEncoder(device, { prefetch: false, lendReadbacks: 1 });
        const first = await encoder.encode(source, 0, 7, params);
        // The only lendable readback is out: the next record is copied into host memory.
        const second = await encoder.encode(source, 7, 7, params);
        expect([first.lent, second.lent]).toEqual([true, false]);
        const words = first.words.slice();
        expect(words.length).toBeGreaterThan(0);
        await encoder.dispose();
        expect(tracked.alive()).toBe(1);
        expect(first.words).toEqual(words);
        encoder.recycle(first);
        expect(tracked.alive()).toBe(0);
        expect(first.words.length).toBe(0); // unmapped: the loan is over
      } finally {
        tracked.stop();
        await close();
      }
    },
    240_000,
  );

  withGpu(
    'a damaged source chunk, an unreadable first record: the error, nothing published, every buffer freed',
    async ({ device }) => {
      const { source, close } = await openSource(arinaPaths);
      const broken = 9;
      const damaged: AcquisitionSource = {
        ...source,
        summary: source.summary,
        pixelMask: source.pixelMask,
        frameCount: source.frameCount,
        frameBytes: source.frameBytes,
        storedCodec: source.storedCodec,
        locate: (i) => source.locate(i),
        storedSizes: () => source.storedSizes(),
        readFrames: (s, n, signal) => source.readFrames(s, n, signal),
        close: () => source.close(),
        async readStored(start, count, signal) {
          const batch = await source.readStored(start, count, signal);
          if (broken >= start && broken < start + count) batch.sizes[broken - start] = 5;
          return batch;
        },
      };
      // The first record's read fails before its decode: the slots not created yet are given up, no hang.
      const unreadable: AcquisitionSource = {
        ...damaged,
        async readStored(start, count, signal) {
          if (start === 0) throw new StemflowError('corrupt', 'The first chunks cannot be read.');
          return source.readStored(start, count, signal);
        },
      };
      const tracked = trackBuffers(device);
      const encoder = gpuRecordEncoder(device);
      const early = gpuRecordEncoder(device, { slots: 3 });
      try {
        for (const [input, e, kind, text] of [
          [damaged, encoder, 'corrupt', /Frame 9 of the source does not decode \(HEADER_TRUNCATED\)/],
          [unreadable, early, 'corrupt', /The first chunks cannot be read/],
        ] as const) {
          const dir = join(await tempDir(), 'archive');
          await expectError(
            convertArchive([{ name: 'a', source: input, sources: [] }], await nodeArchiveTarget(dir), {
              hash: nodeSha256,
              encoder: e,
              codec: small,
            }),
            kind,
            text,
          );
          expect(tracked.alive()).toBe(0);
          await expect(readFile(join(dir, 'manifest.json'))).rejects.toThrow(/ENOENT/);
        }
      } finally {
        tracked.stop();
        await encoder.dispose();
        await early.dispose();
        await close();
      }
    },
    240_000,
  );
});
