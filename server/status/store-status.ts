import { existsSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import type { AppContext } from "../app-context";
import type { Db } from "../../store/database";
import { MASTER_KEY_FILE } from "../secrets/master-key";

export interface StoreCounts {
  merchants: number;
  api_keys: number;
  payments: number;
  webhook_endpoints: number;
}

export interface StoreStatus {
  data_dir: string;
  database: string;
  /** Applied migrations, oldest first; the last one is the schema version. */
  migrations: string[];
  master_key: "PAYGATE_MASTER_KEY" | "file" | "missing";
  counts: StoreCounts;
  /** Dead webhook deliveries (the dead letter queue). */
  dead_deliveries: number;
  /** The oldest next attempt among pending deliveries, ISO 8601, or null. */
  oldest_due_delivery: string | null;
}

const countOf = async (db: Db, table: "merchants" | "api_keys" | "payments"): Promise<number> =>
  Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);

/** How many merchants, active keys, payments and live (not deleted) endpoints the store holds. */
export async function storeCounts(db: Db): Promise<StoreCounts> {
  const endpoints = await db.selectFrom("webhook_endpoints").where("deleted_at", "is", null).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const keys = await db.selectFrom("api_keys").where("status", "=", "active").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return { merchants: await countOf(db, "merchants"), api_keys: Number(keys.n), payments: await countOf(db, "payments"), webhook_endpoints: Number(endpoints.n) };
}

/** What an operator checks first: where the store is, its schema, its key, its size and its webhook backlog. */
export async function storeStatus(app: AppContext): Promise<StoreStatus> {
  const { db, config } = app;
  const migrations = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  const dead = await db.selectFrom("webhook_deliveries").where("status", "=", "dead").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const due = await db.selectFrom("webhook_deliveries").where("status", "=", "pending").select((eb) => eb.fn.min("next_attempt_at").as("at")).executeTakeFirst();
  const dueAt = due?.at === null || due?.at === undefined ? null : new Date(Number(due.at)).toISOString();
  return {
    data_dir: config.dataDir,
    database: app.store.location,
    migrations: migrations.rows.map((r) => r.name),
    master_key: config.masterKey ? "PAYGATE_MASTER_KEY" : existsSync(join(config.dataDir, MASTER_KEY_FILE)) ? "file" : "missing",
    counts: await storeCounts(db),
    dead_deliveries: Number(dead.n),
    oldest_due_delivery: dueAt,
  };
}
