import { useStore } from 'zustand';
import { type AcquisitionState, createAcquisitionStore } from '../state/acquisition-store';
import { createViewStore, type ViewState } from '../state/view-store';
import { acquisitionClient } from '../workers/remote';

/** The page's stores: the acquisition (talking to the worker, created on first use) and display preferences. */
export const acquisitionStore = createAcquisitionStore(
  acquisitionClient,
  () => performance.now(),
  typeof localStorage === 'undefined' ? null : localStorage,
);
export const viewStore = createViewStore();

export function useAcquisition<T>(selector: (s: AcquisitionState) => T): T {
  return useStore(acquisitionStore, selector);
}

export function useView<T>(selector: (s: ViewState) => T): T {
  return useStore(viewStore, selector);
}
