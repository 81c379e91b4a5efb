import { StemflowError } from '../errors';

/**
 * HDF5 gzip filter (id 1) decode: a zlib stream (RFC 1950) inflated with the platform DecompressionStream
 * ('deflate' is the zlib format; Node >= 18 and browsers). The output must be exactly `expectedBytes`;
 * inflation stops as soon as it would exceed that, so a lying stream cannot exhaust memory.
 */
export async function inflate(chunk: Uint8Array, expectedBytes: number): Promise<Uint8Array> {
  const out = new Uint8Array(expectedBytes);
  const stream = new DecompressionStream('deflate');
  const writer = stream.writable.getWriter();
  // Errors of the write side surface again on the read side, where they are reported.
  writer
    .write(new Uint8Array(chunk))
    .then(() => writer.close())
    .catch(() => undefined);
  const reader = stream.readable.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.length > expectedBytes - total) {
        throw new StemflowError(
          'corrupt',
          `A gzip (deflate) chunk inflates to more than the ${expectedBytes} bytes expected.`,
        );
      }
      out.set(value, total);
      total += value.length;
    }
  } catch (e) {
    reader.cancel().catch(() => undefined);
    if (e instanceof StemflowError) throw e;
    const text = e instanceof Error ? e.message : String(e);
    throw new StemflowError('corrupt', `A gzip (deflate) chunk is corrupt: ${text}`, {}, { cause: e });
  }
  if (total !== expectedBytes) {
    throw new StemflowError(
      'corrupt',
      `A gzip (deflate) chunk inflates to ${total} bytes where ${expectedBytes} are expected.`,
    );
  }
  return out;
}
