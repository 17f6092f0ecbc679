// `npm run import-adk -- --from …` until the `sessionstore` CLI runs it as `import-adk`.
import { runImportAdk } from "./cli.js";

process.exitCode = await runImportAdk(process.argv.slice(2));
