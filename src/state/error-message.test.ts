import { describe, expect, it } from 'vitest';
import { describeError, errorMessage } from './error-message';

describe('error messages', () => {
  it('keeps the engine sentence and adds what the user was doing', () => {
    expect(describeError(new Error('no HDF5 signature was found'), 'Could not open a.txt')).toBe(
      'Could not open a.txt: no HDF5 signature was found.',
    );
    expect(describeError(new Error('Chunk 3 is truncated (file b.h5)'), 'Could not load b')).toBe(
      'Could not load b: Chunk 3 is truncated (file b.h5)',
    );
  });

  it('reads errors that crossed the worker boundary as plain objects, and anything else', () => {
    expect(errorMessage({ message: 'from the worker' })).toBe('from the worker');
    expect(errorMessage('text')).toBe('text');
    expect(describeError(new Error(''), 'Could not open x')).toBe('Could not open x: Error.');
  });
});
