import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, type Store } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { isLockTimeout, uniqueViolation, violatesUnique } from "../../store/db-errors";
import type { ConnectorAccountsTable } from "../../store/schema";
import { freshDataDir } from "../support/harness";

/** The error a write throws, or a failure if it did not throw. */
async function thrownBy(write: Promise<unknown>): Promise<unknown> {
  return write.then(
    () => expect.fail("the write should have failed"),
    (error: unknown) => error,
  );
}

describe("database errors read by code", () => {
  let store: Store;
  beforeEach(async () => {
    store = openSqliteStore(freshDataDir());
    await migrate(store.db);
    await store.db.insertInto("merchants").values({ id: "m1", short_id: "mrc_1", name: "M", created_at: "2026-01-01T00:00:00Z" }).execute();
  });
  afterEach(() => store.close());

  const account = (id: string, extra: Partial<ConnectorAccountsTable> = {}): ConnectorAccountsTable => ({
    id,
    short_id: `ca_${id}`,
    merchant_id: "m1",
    connector_id: "nmi",
    mode: "live",
    key_kind: "security_key",
    label: id,
    is_default: 0,
    credential_ref: "env://X",
    is_active: 1,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...extra,
  });
  const insertAccount = (row: ConnectorAccountsTable) => store.db.insertInto("connector_accounts").values(row).execute();

  it("names the table and columns of a violated unique index or primary key", async () => {
    await insertAccount(account("a", { label: "eu", is_default: 1 }));
    expect(uniqueViolation(await thrownBy(insertAccount(account("b", { label: "eu" }))))).toEqual({
      table: "connector_accounts",
      columns: ["merchant_id", "connector_id", "mode", "label"],
    });
    const secondDefault = await thrownBy(insertAccount(account("c", { is_default: 1 })));
    expect(violatesUnique(secondDefault, "connector_accounts", ["merchant_id", "connector_id", "mode", "key_kind"])).toBe(true);
    expect(violatesUnique(secondDefault, "connector_accounts", ["merchant_id", "connector_id", "mode", "label"])).toBe(false);
    const samePk = await thrownBy(insertAccount({ ...account("a", { label: "other" }), short_id: "ca_other" }));
    expect(uniqueViolation(samePk)).toEqual({ table: "connector_accounts", columns: ["id"] });
  });

  it("is not fooled by message text, and ignores other constraints", async () => {
    expect(uniqueViolation(new Error("UNIQUE constraint failed: payments.id"))).toBeUndefined();
    const notNull = await thrownBy(store.db.insertInto("settings").values({ name: "x", value: null as unknown as string }).execute());
    expect((notNull as { code: string }).code).toBe("SQLITE_CONSTRAINT_NOTNULL");
    expect(uniqueViolation(notNull)).toBeUndefined();
    const foreignKey = await thrownBy(insertAccount({ ...account("d"), merchant_id: "nobody" }));
    expect(uniqueViolation(foreignKey)).toBeUndefined();
  });

  it("reads PostgreSQL's unique violation (SQLSTATE 23505) from its fields", () => {
    const pgError = Object.assign(new Error("duplicate key value violates unique constraint \"secrets_pk\""), {
      code: "23505",
      table: "secrets",
      constraint: "secrets_pk",
      detail: "Key (path, version)=(acme/stripe, 2) already exists.",
    });
    expect(uniqueViolation(pgError)).toEqual({ table: "secrets", columns: ["path", "version"], constraint: "secrets_pk" });
    expect(violatesUnique(pgError, "secrets", ["path", "version"])).toBe(true);
    expect(uniqueViolation(Object.assign(new Error("x"), { code: "23503", table: "secrets" }))).toBeUndefined();
  });

  it("recognizes a lock wait that ran out (SQLite busy codes, PostgreSQL 55P03)", () => {
    expect(isLockTimeout(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }))).toBe(true);
    expect(isLockTimeout(Object.assign(new Error("x"), { code: "SQLITE_BUSY_SNAPSHOT" }))).toBe(true);
    expect(isLockTimeout(Object.assign(new Error("x"), { code: "55P03" }))).toBe(true);
    expect(isLockTimeout(Object.assign(new Error("database is locked"), { code: "SQLITE_CONSTRAINT_UNIQUE" }))).toBe(false);
    expect(isLockTimeout(new Error("database is locked"))).toBe(false);
  });
});
