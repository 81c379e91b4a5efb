import { useEffect, useRef, useState } from 'react';
import { formatCount } from '../format';
import { paintRgba, renderRgba } from '../image-mapping';
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
    const rgba = window
      ? paintRgba(values, scale, window, colormap)
      : renderRgba(values, { colormap: log ? 'gray' : colormap, scale, contrast: 'percentile' }).rgba;
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
