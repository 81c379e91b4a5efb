// Entry point of the standalone CLI bundle (scripts/build-cli.mjs --standalone): runs main on process.argv.
import { main } from './main';

process.exitCode = await main(process.argv.slice(2));
