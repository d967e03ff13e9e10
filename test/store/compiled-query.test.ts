import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compiled } from "../../store/compiled-query";
import { migrate, type Store } from "../../store/database";
import { freshDataDir } from "../support/harness";
import { openTestStore } from "../support/test-store";

// Runs on the run's engine: the template is compiled per engine (SQLite `?`, PostgreSQL `$1`).
describe("compiled queries", () => {
  let store: Store;
  beforeAll(async () => {
    store = await openTestStore(freshDataDir());
    await migrate(store.db);
  });
  afterAll(() => store.close());

  const names = async () => (await store.db.selectFrom("settings").select(["name", "value"]).where("name", "like", "cq-%").orderBy("name").execute()).map((r) => `${r.name}=${r.value}`);

  it("binds each call's own values, not those of the call it was compiled for", async () => {
    const insert = compiled((db, row: { name: string; value: string }) => db.insertInto("settings").values(row));
    await insert(store.db, { name: "cq-a", value: "1" });
    await insert(store.db, { name: "cq-b", value: "2" });
    const find = compiled((db, name: string) => db.selectFrom("settings").select("value").where("name", "=", name));
    expect((await find(store.db, "cq-b")).rows).toEqual([{ value: "2" }]);
    expect((await find(store.db, "cq-a")).rows).toEqual([{ value: "1" }]);
    expect((await find(store.db, "cq-none")).rows).toEqual([]);
  });

  it("compiles again for another shape: array lengths, object keys, null values", async () => {
    const insert = compiled((db, rows: Array<{ name: string; value: string }>) => db.insertInto("settings").values(rows));
    await insert(store.db, [{ name: "cq-c", value: "3" }]);
    await insert(store.db, [
      { name: "cq-d", value: "4" },
      { name: "cq-e", value: "5" },
    ]);
    const among = compiled((db, list: string[]) => db.selectFrom("settings").select("name").where("name", "in", list).orderBy("name"));
    expect((await among(store.db, ["cq-c"])).rows.map((r) => r.name)).toEqual(["cq-c"]);
    expect((await among(store.db, ["cq-d", "cq-e", "cq-c"])).rows.map((r) => r.name)).toEqual(["cq-c", "cq-d", "cq-e"]);
    const byValue = compiled((db, value: string | null) => db.selectFrom("settings").select("name").where("name", "like", "cq-%").where("value", value === null ? "is" : "=", value));
    expect((await byValue(store.db, "4")).rows.map((r) => r.name)).toEqual(["cq-d"]);
    expect((await byValue(store.db, null)).rows).toEqual([]);
    expect(await names()).toEqual(["cq-a=1", "cq-b=2", "cq-c=3", "cq-d=4", "cq-e=5"]);
  });

  it("keeps the query's own constants and reports affected rows", async () => {
    const touch = compiled((db, name: string) => db.updateTable("settings").set({ value: "touched" }).where("name", "=", name));
    expect((await touch(store.db, "cq-a")).numAffectedRows).toBe(1n);
    expect((await touch(store.db, "cq-none")).numAffectedRows).toBe(0n);
    expect(await names()).toContain("cq-a=touched");
  });

  it("runs inside a transaction on the transaction's connection", async () => {
    const insert = compiled((db, name: string) => db.insertInto("settings").values({ name, value: "trx" }));
    await store.db
      .transaction()
      .execute(async (trx) => {
        await insert(trx, "cq-rolled-back");
        throw new Error("roll back");
      })
      .catch(() => undefined);
    expect(await names()).not.toContain("cq-rolled-back=trx");
  });

  it("refuses a build that puts an argument into the SQL text", async () => {
    const inlined = compiled((db, name: string) => db.selectFrom("settings").select(sql.raw<string>(`'${name}'`).as("n")));
    await expect(inlined(store.db, "x")).rejects.toThrow(/placed an argument in its SQL text/);
  });
});
