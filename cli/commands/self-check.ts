import type { Command } from "commander";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import { sql } from "kysely";
import { RUNTIME } from "../../server/health/runtime";
import { loadConfig } from "../../server/config";
import { migrate } from "../../store/database";
import { openStore } from "../../store/open-store";
import { openSqliteStore } from "../../store/sqlite-store";

/**
 * Hidden: the packaging script and the executable's tests ask the built program what
 * it really runs on. Creating a database proves the embedded better-sqlite3 addon
 * matches the embedded Node's ABI; the heap limit shows the heap bounds in effect
 * (built in, or raised through NODE_OPTIONS); code_cache says whether V8 took the
 * executable's embedded code cache (scripts/sea-main.cjs), "none" outside it. With a
 * PostgreSQL URL configured it also queries that server (read only) and reports its version.
 */
/** Set by the executable's loader, scripts/sea-main.cjs. */
function codeCacheState(): string {
  const state: unknown = (globalThis as Record<symbol, unknown>)[Symbol.for("paygate.codeCache")];
  return typeof state === "string" ? state : "none";
}

export function registerSelfCheck(program: Command): void {
  program
    .command("self-check", { hidden: true })
    .description("Print the runtime this program runs on, after creating a throwaway SQLite database; with a database URL, also the PostgreSQL server's version")
    .option("--database-url <url>", "also query this PostgreSQL database (env PAYGATE_DATABASE_URL)")
    .action(async (flags: { databaseUrl?: string }) => {
      const postgres = await postgresVersion(flags.databaseUrl);
      const dataDir = mkdtempSync(join(tmpdir(), "paygate-self-check-"));
      try {
        const store = openSqliteStore(dataDir);
        try {
          await migrate(store.db);
          const { rows } = await sql<{ version: string }>`select sqlite_version() as version`.execute(store.db);
          const heapLimitMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
          process.stdout.write(`${JSON.stringify({ ...RUNTIME, sqlite: rows[0]?.version, heap_limit_mb: heapLimitMb, code_cache: codeCacheState(), ...(postgres ? { postgres } : {}) })}\n`);
        } finally {
          await store.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
}

/** The configured PostgreSQL server's version, or undefined when SQLite is configured. */
async function postgresVersion(databaseUrl: string | undefined): Promise<string | undefined> {
  const config = loadConfig({ databaseUrl });
  if (!config.databaseUrl) return undefined;
  const store = openStore(config);
  try {
    const { rows } = await sql<{ version: string }>`select current_setting('server_version') as version`.execute(store.db);
    return rows[0]?.version;
  } finally {
    await store.close();
  }
}
