import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import type { Store } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { freshDataDir } from "../support/harness";

describe("the SQLite connection's settings", () => {
  let store: Store;
  beforeAll(() => {
    store = openSqliteStore(freshDataDir());
  });
  afterAll(() => store.close());

  const pragma = async (name: string) => (await sql.raw(`PRAGMA ${name}`).execute(store.db)).rows[0];

  it("is durable (WAL, synchronous=FULL), checks foreign keys, and keeps a 4 MiB page cache", async () => {
    expect(await pragma("journal_mode")).toEqual({ journal_mode: "wal" });
    expect(await pragma("synchronous")).toEqual({ synchronous: 2 });
    expect(await pragma("foreign_keys")).toEqual({ foreign_keys: 1 });
    expect(await pragma("cache_size")).toEqual({ cache_size: -4096 });
  });
});
