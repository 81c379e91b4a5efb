import { describe, expect, it } from 'vitest';
import type { AcquisitionStore } from '../state/acquisition-store';
import { createViewStore } from '../state/view-store';
import { handleKey } from './use-keyboard';

function fakeAcquisition() {
  const calls: string[] = [];
  const state = {
    regions: {},
    applyPreset: async (m: string) => void calls.push(`preset ${m}`),
    setDetectorMode: async (m: string) => void calls.push(`mode ${m}`),
    movePick: async (r: number, c: number) => void calls.push(`move ${r} ${c}`),
  };
  return { store: { getState: () => state } as unknown as AcquisitionStore, calls };
}

const key = (k: string, mods: Partial<{ shiftKey: boolean; ctrlKey: boolean }> = {}) => ({
  key: k,
  shiftKey: false,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});

describe('keyboard shortcuts', () => {
  it('selects detectors, restores presets, toggles log and moves the pick', () => {
    const { store, calls } = fakeAcquisition();
    const view = createViewStore();
    expect(handleKey(key('b'), store, view)).toBe(true);
    expect(handleKey(key('A', { shiftKey: true }), store, view)).toBe(true);
    expect(handleKey(key('d'), store, view)).toBe(true);
    expect(handleKey(key('ArrowUp'), store, view)).toBe(true);
    expect(handleKey(key('ArrowRight', { shiftKey: true }), store, view)).toBe(true);
    expect(calls).toEqual(['mode bf', 'preset abf', 'mode adf', 'move -1 0', 'move 0 10']);
    handleKey(key('l'), store, view);
    expect(view.getState().virtualScale).toBe('log');
    handleKey(key('L', { shiftKey: true }), store, view);
    expect(view.getState().detectorScale).toBe('linear');
    expect(handleKey(key('x'), store, view)).toBe(false);
    expect(handleKey(key('b', { ctrlKey: true }), store, view)).toBe(false);
  });

  it('chooses the detector tool with V / P / E', () => {
    const { store } = fakeAcquisition();
    const view = createViewStore();
    expect(handleKey(key('p'), store, view)).toBe(true);
    expect(view.getState().detectorTool).toBe('paint');
    handleKey(key('e'), store, view);
    expect(view.getState().detectorTool).toBe('erase');
    handleKey(key('v'), store, view);
    expect(view.getState().detectorTool).toBe('edit');
  });
});
