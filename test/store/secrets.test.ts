import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Cipher } from "../../server/secrets/cipher";
import { putSecret, resolveCredential } from "../../server/secrets/secret-store";
import { migrate, type Store } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { freshDataDir } from "../support/harness";
import { byOperator } from "../../server/audit/audit-actor";

describe("secret versions written concurrently", () => {
  let first: Store;
  let second: Store;
  const cipher = new Cipher(Buffer.alloc(32, 7));
  beforeEach(async () => {
    const dataDir = freshDataDir();
    first = openSqliteStore(dataDir);
    await migrate(first.db);
    second = openSqliteStore(dataDir);
  });
  afterEach(async () => {
    await first.close();
    await second.close();
  });

  it("gives two connections distinct versions and loses none", async () => {
    // Two connections, as two processes would have: their reads of the latest
    // version and their inserts interleave at every await.
    const puts = Array.from({ length: 40 }, (_, i) => putSecret({ db: (i % 2 === 0 ? first : second).db, cipher }, "acme/nmi", `value-${i}`, byOperator()));
    const versions = await Promise.all(puts);
    expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const rows = await first.db.selectFrom("secrets").select(["version", "ciphertext"]).where("path", "=", "acme/nmi").execute();
    const values = rows.map((row) => cipher.decrypt(row.ciphertext, `secret:acme/nmi:${row.version}`));
    expect(values.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `value-${i}`).sort());
    const latest = versions.indexOf(40);
    expect(await resolveCredential({ db: second.db, cipher }, "secret://acme/nmi")).toBe(`value-${latest}`);
  });
});
