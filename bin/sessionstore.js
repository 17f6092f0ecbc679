#!/usr/bin/env node
// The package's `sessionstore` command. In a checkout (src/ present) it runs
// the TypeScript through tsx, so it never runs a stale build; the packed
// package has no src/ and runs the JavaScript that `npm pack` built.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const source = new URL("../src/cli/main.ts", import.meta.url);
if (existsSync(fileURLToPath(source))) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../dist/src/cli/main.js", import.meta.url).href);
}
