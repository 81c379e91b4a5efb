import { useEffect, useRef, useState } from 'react';
import { colormapTable } from '../colormaps';
import { formatCount } from '../format';
import { level, renderRgba, scaled } from '../image-mapping';
import { useView } from '../stores';

/**
 * Draws values on a canvas with a given window (shared contrast) or its own, in the app's colormap (grey for
 * log-scaled patterns); the exact value under the pointer is read out below it.
 */
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
  const colormap = useView((s) => s.colormap);
  const [hover, setHover] = useState<{ row: number; col: number } | null>(null);
  const at = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const row = Math.floor(((e.clientY - r.top) / r.height) * rows);
    const col = Math.floor(((e.clientX - r.left) / r.width) * cols);
    return row >= 0 && row < rows && col >= 0 && col < cols ? { row, col } : null;
  };
  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    canvas.width = cols;
    canvas.height = rows;
    const scale = log ? 'log' : 'linear';
    let rgba: Uint8ClampedArray;
    if (window) {
      const lut = colormapTable(colormap);
      rgba = new Uint8ClampedArray(values.length * 4);
      for (let i = 0; i < values.length; i++) {
        const l = level(scaled(values[i], scale), window[0], window[1]) * 3;
        rgba.set([lut[l], lut[l + 1], lut[l + 2], 255], i * 4);
      }
    } else {
      rgba = renderRgba(values, { colormap: log ? 'gray' : colormap, scale, contrast: 'percentile' }).rgba;
    }
    canvas
      .getContext('2d')
      ?.putImageData(new ImageData(rgba as Uint8ClampedArray<ArrayBuffer>, cols, rows), 0, 0);
  }, [values, rows, cols, window, log, colormap]);
  return (
    <>
      <canvas
        ref={ref}
        className="series-canvas"
        aria-label={label}
        data-testid={testId}
        onMouseMove={(e) => setHover(at(e))}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          const p = at(e);
          if (onPick && p) onPick(p.row, p.col);
        }}
      />
      <span className="series-readout" data-testid={testId ? `${testId}-readout` : undefined}>
        {hover
          ? `row ${hover.row}, col ${hover.col}: ${formatCount(values[hover.row * cols + hover.col])}`
          : ' '}
      </span>
    </>
  );
}
