// Loaded with `node --import`: records every module URL the process resolves
// into the file named by SESSIONSTORE_TEST_IMPORTS_LOG, so a test can say
// which packages a server loaded. The hooks run on their own thread.
import { register } from "node:module";

register(new URL("./record-imports-hooks.mjs", import.meta.url), { data: { log: process.env.SESSIONSTORE_TEST_IMPORTS_LOG } });
