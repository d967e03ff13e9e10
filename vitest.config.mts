import { defineConfig } from "vitest/config";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

/**
 * Files that test SQLite itself (its file, WAL, locks, data_version, backups of the
 * .db file): they run on the sqlite project only. Everything else runs on both engines.
 */
const SQLITE_ONLY = [
  "test/store/group-commit.test.ts",
  "test/store/sqlite-settings.test.ts",
  "test/store/concurrent-migrate.test.ts",
  "test/store/native-addon-cache.test.ts",
  "test/ops/backup.test.ts",
  // master.key files and rotation, which PostgreSQL refuses (test/cli/postgres-cli.test.ts proves the refusal).
  "test/ops/master-key-rotate.test.ts",
  "test/security/file-modes.test.ts",
  "test/cli/store-guard.test.ts",
  "test/cli/shared-data-dir.test.ts",
  "test/keys/revoke-at-once.test.ts",
];

function postgresInstalled(): boolean {
  const root = "/usr/lib/postgresql";
  return existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, "bin", "initdb")));
}

const withPostgres = postgresInstalled();
if (!withPostgres) {
  const line = "PostgreSQL is not installed: the postgres half of the suite is SKIPPED (apt-get install -y postgresql)";
  if (process.env.PAYGATE_REQUIRE_POSTGRES === "1") throw new Error(`${line}; PAYGATE_REQUIRE_POSTGRES=1 makes this a failure`);
  console.warn(`\n!!!!!!!!!! ${line} !!!!!!!!!!\n`);
}

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
    projects: [
      { extends: true, test: { name: "sqlite", env: { PAYGATE_TEST_ENGINE: "sqlite" } } },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: "postgres",
                env: { PAYGATE_TEST_ENGINE: "postgres" },
                exclude: ["test/e2e/**", "**/node_modules/**", ...SQLITE_ONLY],
                globalSetup: ["test/support/postgres-global-setup.ts"],
              },
            },
          ]
        : []),
    ],
  },
});
