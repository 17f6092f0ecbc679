import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console is built into console/dist and committed, so `npm install &&
// npm start` serves it with no build step; CI rebuilds it and fails when the
// committed files differ. Nothing here may vary between machines: no source
// maps (they embed paths), no timestamps, content-hashed names only.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  logLevel: "warn",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    target: "es2022",
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
