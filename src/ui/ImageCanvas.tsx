import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { type DisplaySettings, renderRgba } from './image-mapping';

export interface PixelPosition {
  row: number;
  col: number;
}

/** Maps detector/scan coordinates (pixel centres at integers) to overlay device pixels. */
export interface OverlayTransform {
  x(col: number): number;
  y(row: number): number;
  /** Device pixels per image pixel. */
  scale: number;
  /** Device pixels per CSS pixel. */
  dpr: number;
}

interface ImageCanvasProps {
  values: ArrayLike<number> | null;
  rows: number;
  cols: number;
  settings: DisplaySettings;
  /** Pixels drawn in the flagged colour and left out of the contrast window. */
  exclude?: ArrayLike<number> | null;
  /** Draws crosshairs, outlines... on a device-resolution canvas above the image. */
  overlay?: (ctx: CanvasRenderingContext2D, t: OverlayTransform) => void;
  onPick?: (p: PixelPosition) => void;
  onHover?: (p: PixelPosition | null) => void;
  testId: string;
  label: string;
  emptyText: string;
}

/**
 * An image at its native resolution, upscaled nearest-neighbour (`image-rendering: pixelated`) to the
 * largest size that keeps its aspect ratio inside the panel; follows the panel's size.
 */
export function ImageCanvas(props: ImageCanvasProps) {
  const { values, rows, cols, settings, exclude, overlay, onPick, onHover, testId, label, emptyText } = props;
  const boxRef = useRef<HTMLDivElement>(null);
  const imageRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const [box, setBox] = useState({ width: 0, height: 0 });
  const [dpr, setDpr] = useState(() => window.devicePixelRatio || 1);

  useLayoutEffect(() => {
    const el = boxRef.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => {
      const { width, height } = entry.contentRect;
      setBox({ width: Math.floor(width), height: Math.floor(height) });
      setDpr(window.devicePixelRatio || 1);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const has = values !== null && rows > 0 && cols > 0 && values.length === rows * cols;
  const fit = has ? Math.min(box.width / cols, box.height / rows) : 0;
  const cssWidth = Math.max(1, Math.floor(cols * fit));
  const cssHeight = Math.max(1, Math.floor(rows * fit));

  useEffect(() => {
    const canvas = imageRef.current;
    if (!canvas || !has) return;
    canvas.width = cols;
    canvas.height = rows;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    const { rgba } = renderRgba(values, settings, exclude ?? undefined);
    ctx.putImageData(new ImageData(rgba as Uint8ClampedArray<ArrayBuffer>, cols, rows), 0, 0);
  }, [has, values, rows, cols, settings, exclude]);

  useEffect(() => {
    const canvas = overlayRef.current;
    if (!canvas || !has) return;
    canvas.width = Math.round(cssWidth * dpr);
    canvas.height = Math.round(cssHeight * dpr);
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const sx = canvas.width / cols;
    const sy = canvas.height / rows;
    overlay?.(ctx, { x: (col) => (col + 0.5) * sx, y: (row) => (row + 0.5) * sy, scale: sx, dpr });
  }, [has, overlay, cssWidth, cssHeight, dpr, rows, cols]);

  function positionOf(event: React.MouseEvent<HTMLCanvasElement>): PixelPosition {
    const rect = event.currentTarget.getBoundingClientRect();
    const col = Math.floor(((event.clientX - rect.left) / rect.width) * cols);
    const row = Math.floor(((event.clientY - rect.top) / rect.height) * rows);
    return { row: Math.min(rows - 1, Math.max(0, row)), col: Math.min(cols - 1, Math.max(0, col)) };
  }

  const style = { width: `${cssWidth}px`, height: `${cssHeight}px` };
  return (
    <div className="image-box" ref={boxRef}>
      {has ? (
        <div className="image-stack" style={style}>
          <canvas
            ref={imageRef}
            className="image-canvas"
            style={style}
            data-testid={testId}
            data-rows={rows}
            data-cols={cols}
            aria-label={label}
          />
          <canvas
            ref={overlayRef}
            className="overlay-canvas"
            style={style}
            data-testid={`${testId}-overlay`}
            onClick={onPick ? (e) => onPick(positionOf(e)) : undefined}
            onMouseMove={onHover ? (e) => onHover(positionOf(e)) : undefined}
            onMouseLeave={onHover ? () => onHover(null) : undefined}
          />
        </div>
      ) : (
        <div className="image-empty">{emptyText}</div>
      )}
    </div>
  );
}
