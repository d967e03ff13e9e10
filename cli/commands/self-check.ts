import type { Command } from "commander";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import { sql } from "kysely";
import { RUNTIME } from "../../server/health/runtime";
import { migrate } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";

/**
 * Hidden: the packaging script and the executable's tests ask the built program what
 * it really runs on. Creating a database proves the embedded better-sqlite3 addon
 * matches the embedded Node's ABI; the heap limit shows the heap bounds in effect
 * (built in, or raised through NODE_OPTIONS); code_cache says whether V8 took the
 * executable's embedded code cache (scripts/sea-main.cjs), "none" outside it.
 */
/** Set by the executable's loader, scripts/sea-main.cjs. */
function codeCacheState(): string {
  const state: unknown = (globalThis as Record<symbol, unknown>)[Symbol.for("paygate.codeCache")];
  return typeof state === "string" ? state : "none";
}

export function registerSelfCheck(program: Command): void {
  program
    .command("self-check", { hidden: true })
    .description("Print the runtime this program runs on, after creating a throwaway database")
    .action(async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "paygate-self-check-"));
      try {
        const store = openSqliteStore(dataDir);
        try {
          await migrate(store.db);
          const { rows } = await sql<{ version: string }>`select sqlite_version() as version`.execute(store.db);
          const heapLimitMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
          process.stdout.write(`${JSON.stringify({ ...RUNTIME, sqlite: rows[0]?.version, heap_limit_mb: heapLimitMb, code_cache: codeCacheState() })}\n`);
        } finally {
          await store.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
}
