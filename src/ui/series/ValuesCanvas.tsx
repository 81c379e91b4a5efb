import { useEffect, useRef } from 'react';
import { colormapTable } from '../colormaps';
import { level, renderRgba, scaled } from '../image-mapping';

/** Draws values on a canvas with a given window (shared contrast) or its own. */
export function ValuesCanvas({
  values,
  rows,
  cols,
  window,
  log,
  label,
  onPick,
  testId,
}: {
  values: ArrayLike<number>;
  rows: number;
  cols: number;
  window?: [number, number];
  log?: boolean;
  label: string;
  onPick?: (row: number, col: number) => void;
  testId?: string;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    canvas.width = cols;
    canvas.height = rows;
    const scale = log ? 'log' : 'linear';
    let rgba: Uint8ClampedArray;
    if (window) {
      const lut = colormapTable('viridis');
      rgba = new Uint8ClampedArray(values.length * 4);
      for (let i = 0; i < values.length; i++) {
        const l = level(scaled(values[i], scale), window[0], window[1]) * 3;
        rgba.set([lut[l], lut[l + 1], lut[l + 2], 255], i * 4);
      }
    } else {
      rgba = renderRgba(values, { colormap: log ? 'gray' : 'viridis', scale, contrast: 'percentile' }).rgba;
    }
    canvas
      .getContext('2d')
      ?.putImageData(new ImageData(rgba as Uint8ClampedArray<ArrayBuffer>, cols, rows), 0, 0);
  }, [values, rows, cols, window, log]);
  return (
    <canvas
      ref={ref}
      className="series-canvas"
      aria-label={label}
      data-testid={testId}
      onClick={(e) => {
        if (!onPick) return;
        const r = e.currentTarget.getBoundingClientRect();
        onPick(
          Math.floor(((e.clientY - r.top) / r.height) * rows),
          Math.floor(((e.clientX - r.left) / r.width) * cols),
        );
      }}
    />
  );
}
