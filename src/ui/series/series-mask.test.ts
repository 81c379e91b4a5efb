import { describe, expect, it } from 'vitest';
import { annulus, countCovered, regionMask } from '../../products/detector-geometry';
import { defaultSeriesDetector, seriesMask } from './series-mask';

describe('series panel detector masks', () => {
  it('presets cover the documented pixels exactly', () => {
    const all = seriesMask(defaultSeriesDetector(96, 96, 'all'), 96, 96);
    expect(countCovered(all)).toBe(96 * 96);
    const adf = defaultSeriesDetector(96, 96, 'adf');
    expect(seriesMask(adf, 96, 96)).toEqual(regionMask(annulus(48, 48, 18, 46.08), 96, 96));
    const bf = seriesMask(defaultSeriesDetector(96, 96, 'bf'), 96, 96);
    // A disk of radius 12 about the centre: 12^2 pi within a pixel ring.
    expect(Math.abs(countCovered(bf) - Math.PI * 144)).toBeLessThan(2 * Math.PI * 12);
    const abf = seriesMask(defaultSeriesDetector(96, 96, 'abf'), 96, 96);
    for (let i = 0; i < abf.length; i++) if (abf[i]) expect(bf[i]).toBe(1);
  });
});
