import { useEffect } from 'react';
import type { AcquisitionStore } from '../state/acquisition-store';
import type { ViewStore } from '../state/view-store';

/**
 * What a key does (DOM-free apart from the event's fields): B / A / D select the BF / ABF / ADF detector,
 * Shift + B / A / D restore its preset, L toggles the virtual image's log scale (Shift + L the detector's),
 * arrow keys move the picked scan position (Shift: by 10), V / P / E choose the detector tool (shapes, paint,
 * erase). Returns false for keys it leaves alone.
 */
export function handleKey(
  e: { key: string; shiftKey: boolean; ctrlKey: boolean; metaKey: boolean; altKey: boolean },
  acquisition: AcquisitionStore,
  view: ViewStore,
): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  const a = acquisition.getState();
  const key = e.key.toLowerCase();
  const modes: Record<string, 'bf' | 'abf' | 'adf'> = { b: 'bf', a: 'abf', d: 'adf' };
  if (modes[key]) {
    if (!a.regions) return true;
    void (e.shiftKey ? a.applyPreset(modes[key]) : a.setDetectorMode(modes[key]));
    return true;
  }
  const tools: Record<string, 'edit' | 'paint' | 'erase'> = { v: 'edit', p: 'paint', e: 'erase' };
  if (tools[key] && !e.shiftKey) {
    view.getState().setDetectorTool(tools[key]);
    return true;
  }
  if (key === 'l') {
    if (e.shiftKey) view.getState().toggleDetectorScale();
    else view.getState().toggleVirtualScale();
    return true;
  }
  const step = e.shiftKey ? 10 : 1;
  const moves: Record<string, [number, number]> = {
    arrowup: [-step, 0],
    arrowdown: [step, 0],
    arrowleft: [0, -step],
    arrowright: [0, step],
  };
  if (moves[key]) {
    void a.movePick(...moves[key]);
    return true;
  }
  return false;
}

/** Installs the shortcuts on the window; typing in an input or a select is left alone. */
export function useKeyboard(acquisition: AcquisitionStore, view: ViewStore) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, select, textarea, [contenteditable="true"]')) return;
      if (handleKey(event, acquisition, view)) event.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [acquisition, view]);
}
