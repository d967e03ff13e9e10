import { defineConfig } from "tsup";
import { readFileSync, writeFileSync } from "node:fs";
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

/**
 * What esbuild's ASCII charset leaves as written (comments, a regular expression, a
 * tagged template, whose raw text an escape would change: paygate's tags read the
 * cooked text) becomes \uXXXX escapes, per UTF-16 unit: the same characters to
 * JavaScript. Not a line or paragraph separator: it ends a line comment, an escape
 * does not, so the build stops instead of guessing which one it is.
 */
function asciiOnly(file: string): void {
  const text = readFileSync(file, "utf8");
  if (/[\u2028\u2029]/.test(text)) throw new Error(`${file} holds a raw U+2028/U+2029: escape it in its source`);
  const ascii = text.replace(/[^\x00-\x7f]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
  if (ascii !== text) writeFileSync(file, ascii);
}

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
  // An ASCII-only bundle: V8 holds a source with a single non-Latin-1 character as
  // two bytes per character (7 MB instead of 3.5 for the bundle, for as long as it
  // runs). esbuild escapes strings and names; asciiOnly does the rest.
  esbuildOptions(options) {
    options.charset = "ascii";
    options.minifyWhitespace = true;
    options.minifySyntax = true;
  },
  onSuccess: async () => asciiOnly("dist/paygate.cjs"),
});
