import { useEffect, useMemo, useRef } from 'react';
import { formatCount } from './format';
import { histogram, type Scale, unscaled } from './image-mapping';

const BINS = 96;
const WIDTH = 168;
const HEIGHT = 34;

/**
 * A small histogram of the image's values (in the display scale: log or linear) with the contrast window
 * marked. Bar heights are log(1 + count), so sparse tails stay visible.
 */
export function Histogram(props: {
  values: ArrayLike<number> | null;
  scale: Scale;
  window: [number, number] | null;
  testId: string;
}) {
  const { values, scale, window } = props;
  const ref = useRef<HTMLCanvasElement>(null);
  const h = useMemo(() => (values ? histogram(values, scale, BINS) : null), [values, scale]);

  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const dpr = globalThis.devicePixelRatio || 1;
    canvas.width = Math.round(WIDTH * dpr);
    canvas.height = Math.round(HEIGHT * dpr);
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (!h) return;
    const top = Math.max(1, ...Array.from(h.counts, (c) => Math.log1p(c)));
    const bw = canvas.width / BINS;
    ctx.fillStyle = '#8a93a3';
    h.counts.forEach((c, i) => {
      const bh = (Math.log1p(c) / top) * (canvas.height - 2 * dpr);
      ctx.fillRect(i * bw, canvas.height - bh, Math.max(1, bw - 0.5 * dpr), bh);
    });
    if (window && h.max > h.min) {
      ctx.strokeStyle = '#4fd1ff';
      ctx.lineWidth = 1.5 * dpr;
      for (const v of window) {
        const x = ((v - h.min) / (h.max - h.min)) * canvas.width;
        ctx.beginPath();
        ctx.moveTo(x, 0);
        ctx.lineTo(x, canvas.height);
        ctx.stroke();
      }
    }
  }, [h, window]);

  const title =
    h && window
      ? `range ${formatCount(unscaled(h.min, scale))} – ${formatCount(unscaled(h.max, scale))}; ` +
        `window ${formatCount(unscaled(window[0], scale))} – ${formatCount(unscaled(window[1], scale))}` +
        (scale === 'log' ? ' (log scale)' : '')
      : 'histogram';
  return (
    <canvas
      ref={ref}
      className="histogram"
      style={{ width: `${WIDTH}px`, height: `${HEIGHT}px` }}
      title={title}
      aria-label={title}
      data-testid={props.testId}
      data-window={window ? window.join(',') : ''}
    />
  );
}
