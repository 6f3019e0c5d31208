// Worker bootstrap for development runs from source (vitest, `node --import tsx`): node 20 does
// not apply the parent's tsx loader to worker threads, so this registers tsx in the worker, then
// imports the TypeScript module named by the last argument (module-worker.ts). It is not built
// into dist/: built workers are plain JavaScript.
import { argv } from "node:process";
import { register } from "tsx/esm/api";

register();
await import(argv[argv.length - 1]);
