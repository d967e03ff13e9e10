import { rmSync } from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrationProvider } from "../../store/migrations";
import { runCli } from "../support/cli";
import { dropEngineData, emptyEngineData, freshDataDir, TEST_ENGINE } from "../support/harness";

/** kysely's PostgreSQL migration lock (PostgresAdapter's LOCK_ID): held here, every migrator queues behind it. */
const KYSELY_MIGRATION_LOCK = "3853314791062309107";

/**
 * Instances sharing one PostgreSQL database each migrate at start; several start at
 * once on a fresh database. Each migration must be applied once, whoever comes first,
 * and nobody may fail on a half-made schema. The processes are held at the migration
 * lock until all have started, so they contend for it together.
 */
describe.skipIf(TEST_ENGINE !== "postgres")("migrations from several processes at once on PostgreSQL", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) {
      await dropEngineData(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("six `paygate migrate` released together on one fresh database all succeed, and each migration is applied once", async () => {
    const names = Object.keys(await migrationProvider.getMigrations());
    for (let round = 0; round < 2; round++) {
      const dataDir = freshDataDir();
      dirs.push(dataDir);
      const url = (await emptyEngineData(dataDir)) as string;
      const holder = new pg.Client({ connectionString: url });
      await holder.connect();
      let results: Awaited<ReturnType<typeof runCli>>[];
      try {
        await holder.query(`select pg_advisory_lock(${KYSELY_MIGRATION_LOCK})`);
        const running = Promise.all(Array.from({ length: 6 }, () => runCli(["migrate", "--data", dataDir])));
        await expect
          .poll(async () => (await holder.query("select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())")).rows[0].n, { timeout: 20_000 })
          .toBe(6);
        await holder.query(`select pg_advisory_unlock(${KYSELY_MIGRATION_LOCK})`);
        results = await running;
      } finally {
        await holder.end();
      }
      for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
      const applied = results.map((r) => r.stdout).join("\n");
      for (const name of names) expect(applied.match(new RegExp(name, "g"))?.length, name).toBe(1);
      expect(results.filter((r) => r.stdout.includes("up to date"))).toHaveLength(5);
    }
  });
});
