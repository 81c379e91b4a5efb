// Entry point of the standalone CLI bundle (scripts/build-cli.mjs --standalone): runs main on process.argv.
// Chunk reads run concurrently on libuv's thread pool; give it one thread per core or so (set before any I/O).
import { availableParallelism } from 'node:os';

process.env.UV_THREADPOOL_SIZE ??= String(Math.min(16, Math.max(4, availableParallelism())));
const { main } = await import('./main');
process.exitCode = await main(process.argv.slice(2));
