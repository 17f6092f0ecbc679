export { AdkDatabase, type AdkEvent, type AdkSession } from "./adk-database.js";
export { IMPORT_ADK_USAGE, runImportAdk } from "./cli.js";
export { type ImportOptions, type ImportProgress, type ImportSummary, importAdk } from "./import.js";
export { PickleError, unpickle } from "./pickle.js";
