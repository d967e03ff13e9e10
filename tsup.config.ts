import { defineConfig } from "tsup";
import { readFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

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
});
