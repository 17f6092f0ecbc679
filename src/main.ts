#!/usr/bin/env node
// The server alone: `tsx src/main.ts [options]` is `sessionstore serve [options]`
// (test harnesses and the benchmark start it this way).
import { runAsProcess } from "./cli/process.js";

runAsProcess(["serve", ...process.argv.slice(2)]);
