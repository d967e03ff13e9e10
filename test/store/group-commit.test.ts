import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, type Store } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { GroupCommit } from "../../store/group-commit";
import { freshDataDir } from "../support/harness";

describe("group commit", () => {
  let store: Store;
  let writes: GroupCommit;
  beforeEach(async () => {
    store = openSqliteStore(freshDataDir());
    await migrate(store.db);
    writes = new GroupCommit(store.db);
  });
  afterEach(() => store.close());

  const insert = (name: string) => (trx: Parameters<Parameters<GroupCommit["run"]>[0]>[0]) => trx.insertInto("settings").values({ name, value: "v" }).execute();
  const names = async () => (await store.db.selectFrom("settings").select("name").orderBy("name").execute()).map((r) => r.name);

  it("commits concurrent writes together, rolling back only the one that failed", async () => {
    const results = await Promise.allSettled([
      writes.run(insert("a")),
      writes.run(async (trx) => {
        await insert("b")(trx);
        throw new Error("b fails after writing");
      }),
      writes.run(insert("c")),
      writes.run(insert("a")), // duplicate key: fails alone
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected"]);
    expect(await names()).toEqual(["a", "c"]);
  });

  it("shares one transaction among writes that arrive together", async () => {
    const before = store.dataVersion();
    const other = openSqliteStore(store.location.replace(/\/paygate\.db$/, ""));
    try {
      const seen = other.dataVersion();
      await Promise.all(Array.from({ length: 50 }, (_, i) => writes.run(insert(`k${i}`))));
      // data_version moves once per commit seen from another connection.
      expect(other.dataVersion() - seen).toBe(1);
    } finally {
      await other.close();
    }
    expect(store.dataVersion()).toBe(before);
    expect(await names()).toHaveLength(50);
  });

  it("settles each write, fulfilled or rejected, only once its group's COMMIT returned", async () => {
    // A second connection, queried synchronously at the moment each promise settles,
    // sees the group's rows only if the COMMIT has already happened.
    const observer = new BetterSqlite3(store.location, { readonly: true });
    const visible = observer.prepare("SELECT count(*) FROM settings WHERE name = ?").pluck();
    try {
      const settled = await Promise.all([
        writes.run(insert("x")).then(() => visible.get("x")),
        writes
          .run(async (trx) => {
            await insert("b")(trx);
            throw new Error("b fails after writing");
          })
          .catch(() => [visible.get("x"), visible.get("b")]),
        writes.run(insert("y")).then(() => visible.get("y")),
      ]);
      expect(settled).toEqual([1, [1, 0], 1]);
      await writes.run(insert("z"));
      expect(await names()).toEqual(["x", "y", "z"]);
    } finally {
      observer.close();
    }
  });
});
