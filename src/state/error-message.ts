/**
 * Failure messages for the status line. Errors cross the worker boundary as plain Errors (comlink keeps
 * name and message), so the engine's sentences arrive intact; this adds what the user was doing.
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === 'object' && e !== null && 'message' in e && typeof e.message === 'string')
    return e.message;
  return String(e);
}

/** "<what failed>: <why>.", with the engine's sentence as the reason. */
export function describeError(e: unknown, context: string): string {
  const reason = errorMessage(e).trim() || 'unknown error';
  const sentence = /[.!?)]$/.test(reason) ? reason : `${reason}.`;
  return `${context}: ${sentence}`;
}
