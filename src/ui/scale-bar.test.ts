import { describe, expect, it } from 'vitest';
import { formatLength, scaleBar } from './scale-bar';

describe('scale bar', () => {
  it('takes the longest 1/2/5 x 10^k length that fits', () => {
    // 0.8333 mrad per pixel, 4 screen pixels per pixel, at most 100 screen pixels: 20.8 mrad fit -> 20 mrad.
    const bar = scaleBar(0.1 / 0.12, 4, 100, 'mrad')!;
    expect(bar.length).toBe(20);
    expect(bar.pixels).toBeCloseTo(96, 10);
    expect(bar.label).toBe('20 mrad');
    expect(scaleBar(1, 1, 50, 'nm')!.length).toBe(50);
    expect(scaleBar(1, 1, 49.9, 'nm')!.length).toBe(20);
    expect(scaleBar(0.3, 2, 7, 'nm')!.length).toBe(1);
    expect(scaleBar(0.03, 1, 7, 'nm')!.length).toBe(0.2);
  });

  it('switches to larger units in the label and refuses a missing calibration', () => {
    expect(formatLength(2000, 'nm')).toBe('2 µm');
    expect(formatLength(500, 'nm')).toBe('500 nm');
    expect(formatLength(0.2, 'nm')).toBe('0.2 nm');
    expect(scaleBar(0, 1, 100, 'nm')).toBeNull();
    expect(scaleBar(Number.NaN, 1, 100, 'nm')).toBeNull();
    expect(scaleBar(1, 0, 100, 'nm')).toBeNull();
  });
});
