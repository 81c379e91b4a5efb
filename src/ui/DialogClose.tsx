import type { KeyboardEvent } from 'react';

/** The close button of a floating panel (Series, tcBF, Archive): top right, always reachable. */
export function DialogClose({ onClose, label }: { onClose: () => void; label: string }) {
  return (
    <button
      type="button"
      className="dialog-close"
      aria-label={`Close ${label}`}
      title="Close (Esc)"
      onClick={onClose}
    >
      ×
    </button>
  );
}

/** Escape pressed anywhere inside a floating panel closes it (inputs that use Escape themselves stop it). */
export function closeOnEscape(onClose: () => void) {
  return (e: KeyboardEvent<HTMLElement>) => {
    if (e.key === 'Escape' && !e.defaultPrevented) onClose();
  };
}
