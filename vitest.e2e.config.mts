import { defineConfig } from "vitest/config";

/**
 * End-to-end tests of the packaged executable (`npm run package` first). Kept out of
 * `npm test`, which has no executable to test; CI runs them after packaging.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
