import { defineConfig } from "tsup";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Plugin } from "esbuild";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

/** `import text from "./file?raw"`: the file's text inlined, as Vite (the tests) reads it too. */
const rawText: Plugin = {
  name: "raw-text",
  setup(build) {
    build.onResolve({ filter: /\?raw$/ }, (args) => ({ path: resolve(args.resolveDir, args.path.slice(0, -"?raw".length)), namespace: "raw-text" }));
    build.onLoad({ filter: /.*/, namespace: "raw-text" }, (args) => ({ contents: readFileSync(args.path, "utf8"), loader: "text" }));
  },
};

// One CommonJS file with every dependency inside: the single executable can only
// require Node built-ins, and the better-sqlite3 addon is loaded separately
// (store/native-binding.ts).
export default defineConfig({
  entry: { paygate: "cli/main.ts" },
  outDir: "dist",
  format: ["cjs"],
  outExtension: () => ({ js: ".cjs" }),
  platform: "node",
  target: "node20",
  noExternal: [/.*/],
  shims: true,
  removeNodeProtocol: false,
  splitting: false,
  sourcemap: false,
  clean: false,
  define: { PAYGATE_VERSION: JSON.stringify(version) },
  esbuildPlugins: [rawText],
});
