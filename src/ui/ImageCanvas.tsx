import {
  forwardRef,
  useCallback,
  useEffect,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';
import { type DisplaySettings, renderRgba } from './image-mapping';
import { clampView, FIT_VIEW, type ImageView, layoutView, zoomAt } from './view-transform';

export interface PixelPosition {
  row: number;
  col: number;
}

/** A point in image coordinates: pixel (row, col) has its centre at x = col, y = row. */
export interface ImagePoint {
  x: number;
  y: number;
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

/** What a primary-button drag on the image does, from its start; null when the press grabs nothing. */
export interface DragHandler {
  move(p: ImagePoint): void;
  end(p: ImagePoint): void;
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
  /** A press of the primary button (no pan modifier): return a handler to drag something, or null. */
  onDragStart?: (p: ImagePoint, pixelsPerCss: number) => DragHandler | null;
  /** The cursor to show over a point (e.g. a handle), when not the default crosshair. */
  cursorAt?: (p: ImagePoint, pixelsPerCss: number) => string | null;
  /** Called with the contrast window used (scaled units) after each render. */
  onRendered?: (window: [number, number]) => void;
  testId: string;
  label: string;
  emptyText: string;
}

export interface ImageCanvasHandle {
  /** The image as shown (colormap, contrast, flagged colour), at native resolution, as PNG. */
  toPng(): Promise<Blob | null>;
  resetView(): void;
}

/**
 * An image at its native resolution, upscaled nearest-neighbour (`image-rendering: pixelated`) to fit the
 * panel, then zoomed (wheel, about the cursor) and panned (middle button, or shift + drag). The overlay
 * canvas covers the whole panel at device resolution and takes the pointer.
 */
export const ImageCanvas = forwardRef<ImageCanvasHandle, ImageCanvasProps>(function ImageCanvas(props, ref) {
  const {
    values,
    rows,
    cols,
    settings,
    exclude,
    overlay,
    onPick,
    onHover,
    onDragStart,
    cursorAt,
    onRendered,
    testId,
    label,
    emptyText,
  } = props;
  const boxRef = useRef<HTMLDivElement>(null);
  const imageRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<HTMLCanvasElement>(null);
  const [box, setBox] = useState({ width: 0, height: 0 });
  const [dpr, setDpr] = useState(() => window.devicePixelRatio || 1);
  const [view, setView] = useState<ImageView>(FIT_VIEW);
  const [cursor, setCursor] = useState('crosshair');

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

  // A new image shape starts fitted.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset on shape change only
  useEffect(() => setView(FIT_VIEW), [rows, cols]);

  const has = values !== null && rows > 0 && cols > 0 && values.length === rows * cols;
  const layout = layoutView(box, rows, cols, view);

  useImperativeHandle(
    ref,
    () => ({
      toPng: () =>
        new Promise<Blob | null>((resolve) => {
          const canvas = imageRef.current;
          if (!canvas) resolve(null);
          else canvas.toBlob(resolve, 'image/png');
        }),
      resetView: () => setView(FIT_VIEW),
    }),
    [],
  );

  useEffect(() => {
    const canvas = imageRef.current;
    if (!canvas || !has) return;
    canvas.width = cols;
    canvas.height = rows;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    const { rgba, window } = renderRgba(values, settings, exclude ?? undefined);
    ctx.putImageData(new ImageData(rgba as Uint8ClampedArray<ArrayBuffer>, cols, rows), 0, 0);
    onRendered?.(window);
  }, [has, values, rows, cols, settings, exclude, onRendered]);

  useEffect(() => {
    const canvas = overlayRef.current;
    if (!canvas || !has) return;
    canvas.width = Math.round(box.width * dpr);
    canvas.height = Math.round(box.height * dpr);
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    const s = layout.scale * dpr;
    overlay?.(ctx, {
      x: (col) => (layout.left + (col + 0.5) * layout.scale) * dpr,
      y: (row) => (layout.top + (row + 0.5) * layout.scale) * dpr,
      scale: s,
      dpr,
    });
  }, [has, overlay, box, dpr, layout.left, layout.top, layout.scale]);

  // Wheel zoom needs a non-passive listener to keep the page from scrolling.
  const viewRef = useRef(view);
  viewRef.current = view;
  useEffect(() => {
    const el = overlayRef.current;
    if (!el || !has) return;
    const onWheel = (event: WheelEvent) => {
      event.preventDefault();
      const rect = el.getBoundingClientRect();
      const factor = Math.exp(-event.deltaY * (event.deltaMode === 1 ? 0.05 : 0.0015));
      setView((v) =>
        zoomAt(box, rows, cols, v, v.zoom * factor, event.clientX - rect.left, event.clientY - rect.top),
      );
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, [has, box, rows, cols]);

  const pointOf = useCallback(
    (clientX: number, clientY: number): ImagePoint => {
      const rect = overlayRef.current!.getBoundingClientRect();
      return {
        x: (clientX - rect.left - layout.left) / layout.scale - 0.5,
        y: (clientY - rect.top - layout.top) / layout.scale - 0.5,
      };
    },
    [layout.left, layout.top, layout.scale],
  );

  /** The pixel under a point, or null outside the image. */
  function pixelOf(p: ImagePoint): PixelPosition | null {
    const col = Math.floor(p.x + 0.5);
    const row = Math.floor(p.y + 0.5);
    if (row < 0 || row >= rows || col < 0 || col >= cols) return null;
    return { row, col };
  }

  const gesture = useRef<
    | { kind: 'pan'; x: number; y: number; view: ImageView }
    | { kind: 'drag'; handler: DragHandler }
    | { kind: 'click'; x: number; y: number }
    | null
  >(null);

  function onPointerDown(event: React.PointerEvent<HTMLCanvasElement>) {
    const panning = event.button === 1 || (event.button === 0 && (event.shiftKey || event.altKey));
    if (event.button !== 0 && !panning) return;
    event.currentTarget.setPointerCapture(event.pointerId);
    event.preventDefault();
    if (panning) {
      gesture.current = { kind: 'pan', x: event.clientX, y: event.clientY, view: viewRef.current };
      setCursor('grabbing');
      return;
    }
    const p = pointOf(event.clientX, event.clientY);
    const handler = onDragStart?.(p, 1 / layout.scale) ?? null;
    gesture.current = handler
      ? { kind: 'drag', handler }
      : { kind: 'click', x: event.clientX, y: event.clientY };
  }

  function onPointerMove(event: React.PointerEvent<HTMLCanvasElement>) {
    const g = gesture.current;
    const p = pointOf(event.clientX, event.clientY);
    if (g?.kind === 'pan') {
      const v = g.view;
      setView(
        clampView(box, rows, cols, {
          zoom: v.zoom,
          panX: v.panX + event.clientX - g.x,
          panY: v.panY + event.clientY - g.y,
        }),
      );
      return;
    }
    if (g?.kind === 'drag') g.handler.move(p);
    onHover?.(pixelOf(p));
    if (!g) setCursor(cursorAt?.(p, 1 / layout.scale) ?? 'crosshair');
  }

  function onPointerUp(event: React.PointerEvent<HTMLCanvasElement>) {
    const g = gesture.current;
    gesture.current = null;
    if (!g) return;
    const p = pointOf(event.clientX, event.clientY);
    if (g.kind === 'pan') setCursor('crosshair');
    else if (g.kind === 'drag') g.handler.end(p);
    else if (Math.hypot(event.clientX - g.x, event.clientY - g.y) < 4) {
      const px = pixelOf(p);
      if (px) onPick?.(px);
    }
  }

  const imageStyle = {
    left: `${layout.left}px`,
    top: `${layout.top}px`,
    width: `${layout.width}px`,
    height: `${layout.height}px`,
  };
  return (
    <div className="image-box" ref={boxRef}>
      {has ? (
        <>
          <canvas
            ref={imageRef}
            className="image-canvas"
            style={imageStyle}
            data-testid={testId}
            data-rows={rows}
            data-cols={cols}
            data-zoom={view.zoom}
            aria-label={label}
          />
          <canvas
            ref={overlayRef}
            className="overlay-canvas"
            style={{ cursor }}
            data-testid={`${testId}-overlay`}
            onPointerDown={onPointerDown}
            onPointerMove={onPointerMove}
            onPointerUp={onPointerUp}
            onPointerCancel={() => {
              gesture.current = null;
            }}
            onPointerLeave={() => {
              if (!gesture.current) onHover?.(null);
            }}
            onDoubleClick={() => setView(FIT_VIEW)}
            onContextMenu={(e) => e.preventDefault()}
            onAuxClick={(e) => e.preventDefault()}
          />
        </>
      ) : (
        <div className="image-empty">{emptyText}</div>
      )}
    </div>
  );
});
