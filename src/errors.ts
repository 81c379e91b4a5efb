/**
 * Typed errors of the engine. Every failure a user can meet is a StemflowError with a `kind`, a sentence a
 * scientist understands, and where known the file and frame it concerns. Library errors are wrapped at the
 * boundary (`cause` keeps the original).
 */
export type ErrorKind =
  /** The file ends before a structure it declares (a truncated download or copy). */
  | 'truncated'
  /** Bytes that contradict the format: bad signature, checksum, sizes that lie, cycles. */
  | 'corrupt'
  /** A valid file that uses a feature or filter we do not read (zstd, an unknown filter id, ...). */
  | 'unsupported'
  /** Something the user asked for is absent: a dataset path, a shard named by a master file. */
  | 'not-found'
  /** Files that do not belong together: shapes or dtypes differ, duplicates, wrong scan shape. */
  | 'mismatch'
  /** The request was cancelled through its AbortSignal. */
  | 'aborted'
  /** A memory plan does not fit the adapter limits or the user's budget. */
  | 'budget'
  /** The GPU device was lost or failed validation. */
  | 'device'
  /** Any other invalid argument. */
  | 'invalid';

export interface ErrorContext {
  /** The file name the error concerns. */
  file?: string;
  /** The frame index (scan order) the error concerns. */
  frame?: number;
  /** Byte offset in the file, when it helps to locate the fault. */
  offset?: number;
}

export class StemflowError extends Error {
  override readonly name = 'StemflowError';
  readonly kind: ErrorKind;
  readonly file?: string;
  readonly frame?: number;
  readonly offset?: number;

  constructor(kind: ErrorKind, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(withContext(message, context), options);
    this.kind = kind;
    this.file = context.file;
    this.frame = context.frame;
    this.offset = context.offset;
  }
}

function withContext(message: string, { file, frame, offset }: ErrorContext): string {
  const where = [
    file === undefined ? '' : `file ${file}`,
    frame === undefined ? '' : `frame ${frame}`,
    offset === undefined ? '' : `byte ${offset}`,
  ].filter(Boolean);
  return where.length ? `${message} (${where.join(', ')})` : message;
}

export function isStemflowError(e: unknown, kind?: ErrorKind): e is StemflowError {
  return e instanceof StemflowError && (kind === undefined || e.kind === kind);
}

/** Throws a StemflowError of kind 'aborted' when the signal is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new StemflowError('aborted', 'The operation was cancelled.');
}

/** Adds file/frame context to a StemflowError that lacks it; wraps anything else as 'corrupt'. */
export function withErrorContext(e: unknown, context: ErrorContext): StemflowError {
  if (e instanceof StemflowError) {
    if (
      (context.file === undefined || e.file !== undefined) &&
      (context.frame === undefined || e.frame !== undefined)
    )
      return e;
    const base = e.message.replace(/ \([^)]*\)$/, '');
    return new StemflowError(
      e.kind,
      base,
      { file: e.file ?? context.file, frame: e.frame ?? context.frame, offset: e.offset ?? context.offset },
      { cause: e.cause ?? e },
    );
  }
  const text = e instanceof Error ? e.message : String(e);
  return new StemflowError('corrupt', `Unexpected failure while reading: ${text}`, context, { cause: e });
}
