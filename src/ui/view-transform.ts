/**
 * Zoom and pan of an image in a panel (DOM-free). At zoom 1 the image fits the panel, centred; `panX` and
 * `panY` move it in CSS pixels. An image larger than the panel is kept covering it; a smaller one is centred.
 */
export interface ImageView {
  zoom: number;
  panX: number;
  panY: number;
}

export const FIT_VIEW: ImageView = { zoom: 1, panX: 0, panY: 0 };

/** The largest zoom: about 200 CSS pixels per image pixel, and never less than fitting. */
export function maxZoom(box: { width: number; height: number }, rows: number, cols: number): number {
  const fit = fitScale(box, rows, cols);
  return fit > 0 ? Math.max(1, 200 / fit) : 1;
}

export function fitScale(box: { width: number; height: number }, rows: number, cols: number): number {
  if (rows <= 0 || cols <= 0) return 0;
  return Math.min(box.width / cols, box.height / rows);
}

export interface ViewLayout {
  /** CSS pixels per image pixel. */
  scale: number;
  /** Where the image's top-left corner lies in the panel, and its size, in CSS pixels. */
  left: number;
  top: number;
  width: number;
  height: number;
}

export function layoutView(
  box: { width: number; height: number },
  rows: number,
  cols: number,
  view: ImageView,
): ViewLayout {
  const scale = fitScale(box, rows, cols) * view.zoom;
  const width = cols * scale;
  const height = rows * scale;
  return {
    scale,
    left: (box.width - width) / 2 + view.panX,
    top: (box.height - height) / 2 + view.panY,
    width,
    height,
  };
}

function clampPan(pan: number, boxSize: number, size: number): number {
  if (size <= boxSize) return 0;
  const slack = (size - boxSize) / 2;
  return Math.min(slack, Math.max(-slack, pan));
}

export function clampView(
  box: { width: number; height: number },
  rows: number,
  cols: number,
  view: ImageView,
): ImageView {
  const zoom = Math.min(maxZoom(box, rows, cols), Math.max(1, view.zoom));
  const scale = fitScale(box, rows, cols) * zoom;
  return {
    zoom,
    panX: clampPan(view.panX, box.width, cols * scale),
    panY: clampPan(view.panY, box.height, rows * scale),
  };
}

/** The view zoomed to `zoom` keeping the image point under panel point (px, py) where it is. */
export function zoomAt(
  box: { width: number; height: number },
  rows: number,
  cols: number,
  view: ImageView,
  zoom: number,
  px: number,
  py: number,
): ImageView {
  const before = layoutView(box, rows, cols, view);
  if (!(before.scale > 0)) return view;
  const target = clampView(box, rows, cols, { ...view, zoom });
  const u = (px - before.left) / before.scale;
  const v = (py - before.top) / before.scale;
  const scale = fitScale(box, rows, cols) * target.zoom;
  const left = px - u * scale;
  const top = py - v * scale;
  return clampView(box, rows, cols, {
    zoom: target.zoom,
    panX: left - (box.width - cols * scale) / 2,
    panY: top - (box.height - rows * scale) / 2,
  });
}
