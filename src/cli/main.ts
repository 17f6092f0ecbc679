#!/usr/bin/env node
// `sessionstore`: the command line (bin/sessionstore.js starts it).
import { runAsProcess } from "./process.js";

runAsProcess(process.argv.slice(2));
