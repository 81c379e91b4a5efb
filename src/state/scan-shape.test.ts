import { describe, expect, it } from 'vitest';
import { factorisations, recentScan, rememberScan } from './scan-shape';

describe('scan shapes', () => {
  it('lists every factorisation of the frame count, most square first', () => {
    expect(factorisations(60)).toEqual([
      [6, 10],
      [10, 6],
      [5, 12],
      [12, 5],
      [4, 15],
      [15, 4],
      [3, 20],
      [20, 3],
      [2, 30],
      [30, 2],
      [1, 60],
      [60, 1],
    ]);
    expect(factorisations(262144)[0]).toEqual([512, 512]);
    expect(factorisations(7)).toEqual([
      [1, 7],
      [7, 1],
    ]);
  });

  it('remembers the last choice per frame count, and ignores one that no longer fits', () => {
    const map = new Map<string, string>();
    const storage = {
      getItem: (k: string) => map.get(k) ?? null,
      setItem: (k: string, v: string) => void map.set(k, v),
    };
    expect(recentScan(storage, 60)).toBeNull();
    rememberScan(storage, 60, [10, 6]);
    expect(recentScan(storage, 60)).toEqual([10, 6]);
    expect(recentScan(storage, 61)).toBeNull();
    map.set('stemflow.scan.64', '7x9');
    expect(recentScan(storage, 64)).toBeNull();
    expect(recentScan(null, 60)).toBeNull();
  });
});
