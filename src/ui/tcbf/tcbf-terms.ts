import type { TcbfStage } from '../../workers/acquisition-api';

/** The stages of a tcBF run, in the order the worker reports them. */
export const STAGES: TcbfStage[] = ['preparation', 'initial fit', 'fit to fifth order', 'reconstruction'];

/** The name of each aberration term, keyed `n,m`. */
export const TERM_NAMES: Record<string, string> = {
  '0,1': 'image shift',
  '1,0': 'defocus',
  '1,2': 'two-fold astigmatism',
  '2,1': 'axial coma',
  '2,3': 'three-fold astigmatism',
  '3,0': 'spherical aberration',
  '3,2': 'star aberration',
  '3,4': 'four-fold astigmatism',
  '4,1': 'fourth-order axial coma',
  '4,3': 'three-lobe aberration',
  '4,5': 'five-fold astigmatism',
  '5,0': 'fifth-order spherical',
  '5,2': 'fifth-order star',
  '5,4': 'rosette',
  '5,6': 'six-fold astigmatism',
};
