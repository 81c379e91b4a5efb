import { describe, expect, it } from 'vitest';
import { planMaskStep } from './mask-session';

const mask = (bits: string) => Uint8Array.from(bits, (c) => (c === '1' ? 1 : 0));

describe('planMaskStep: the fewest rows among delta, full and complement', () => {
  const counted = mask('11111111'); // no flagged pixels
  it('a small mask from scratch reads its pixels', () => {
    const s = planMaskStep(null, mask('11000000'), counted, true);
    expect(s).toMatchObject({ mode: 'full', start: 'zero', pixelsRead: 2 });
    expect([...s.add]).toEqual([0, 1]);
    expect([...s.subtract]).toEqual([]);
  });
  it('a mask of more than half the counted pixels reads its complement, flagged pixels left out', () => {
    const withFlag = mask('11111101'); // pixel 6 flagged: it is in neither list
    const s = planMaskStep(null, mask('11111000'), withFlag, true);
    expect(s).toMatchObject({ mode: 'complement', start: 'totals', pixelsRead: 2 });
    expect([...s.subtract]).toEqual([5, 7]);
    expect(planMaskStep(null, mask('11111000'), withFlag, false).mode).toBe('full');
    // Half exactly: a tie keeps the direct sum.
    expect(planMaskStep(null, mask('11110000'), counted, true).mode).toBe('full');
  });
  it('a nudge reads the pixels that changed, added and removed', () => {
    const s = planMaskStep(mask('01110000'), mask('00111000'), counted, true);
    expect(s).toMatchObject({ mode: 'delta', start: 'current', pixelsRead: 2 });
    expect([...s.add]).toEqual([4]);
    expect([...s.subtract]).toEqual([1]);
  });
  it('a change larger than the new mask recomputes; the whole detector reads nothing', () => {
    expect(planMaskStep(mask('11100000'), mask('00000011'), counted, true).mode).toBe('full');
    const all = planMaskStep(mask('00000011'), mask('11111111'), counted, true);
    expect(all).toMatchObject({ mode: 'complement', pixelsRead: 0 });
  });
});
