import { Migrator } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, type Store } from "../../store/database";
import { migrationProvider } from "../../store/migrations";
import { dropEngineData, emptyEngineData, freshDataDir } from "../support/harness";
import { openTestStore } from "../support/test-store";

/** Records written before audit records had a mode get theirs on upgrade. */
describe("migration 009: the mode of earlier audit records", () => {
  let store: Store;
  const dataDir = freshDataDir();
  beforeAll(async () => {
    await emptyEngineData(dataDir);
    store = await openTestStore(dataDir);
    await new Migrator({ db: store.db, provider: migrationProvider }).migrateTo("008_dashboard_chosen_merchant");
  });
  afterAll(async () => {
    await store.close();
    await dropEngineData(dataDir);
  });

  it("takes an account's mode from its row, others' from their details, and leaves mode-less records null", async () => {
    const db = store.db;
    const now = new Date().toISOString();
    await db.insertInto("merchants").values({ id: "m1", short_id: "mrc_m1", name: "M", created_at: now }).execute();
    await db
      .insertInto("connector_accounts")
      .values({
        id: "ca-live",
        short_id: "ca_live",
        merchant_id: "m1",
        connector_id: "stripe",
        mode: "live",
        key_kind: "api_key",
        label: "main",
        credential_ref: "secret://x",
        is_default: 1,
        is_active: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const record = (id: string, target_type: string, target_id: string, details: unknown) => ({
      id,
      created_at: now,
      actor_type: "cli",
      actor_id: "op",
      action: "x",
      target_type,
      target_id,
      merchant_id: "m1",
      details: details === null ? null : JSON.stringify(details),
    });
    await db
      .insertInto("audit_log")
      .values([
        record("a1", "connector_account", "ca-live", { changed: ["mode"] }),
        record("a2", "api_key", "k1", { mode: "test", role: "merchant" }),
        record("a3", "routing", "live", { mode: "live", connectors: ["stripe"] }),
        record("a4", "merchant", "m1", null),
        record("a5", "secret", "some/path", { version: 2 }),
        // Typed as today's rows, which have a mode column that 008 does not.
      ] as never)
      .execute();
    expect(await migrate(db)).toContain("009_audit_mode");
    const rows = await db.selectFrom("audit_log").select(["id", "mode"]).orderBy("id").execute();
    expect(rows).toEqual([
      { id: "a1", mode: "live" },
      { id: "a2", mode: "test" },
      { id: "a3", mode: "live" },
      { id: "a4", mode: null },
      { id: "a5", mode: null },
    ]);
  });
});
