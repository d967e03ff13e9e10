import { defineConfig } from "vitest/config";
import { readFileSync } from "node:fs";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

export default defineConfig({
  define: { PAYGATE_VERSION: JSON.stringify(version) },
  test: {
    include: ["test/**/*.test.ts"],
    // The executable's end-to-end tests run after packaging: npm run test:e2e.
    exclude: ["test/e2e/**", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The dashboard's stylesheet is imported as text (`?raw`); vitest empties CSS unless told.
    css: { include: [/server\/dashboard\/assets\//] },
  },
});
