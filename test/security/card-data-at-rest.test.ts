import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Migrator } from "kysely";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../server/http/canonical-json";
import { DATABASE_FILE, migrate } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { claimIdempotencyKey, SCRUBBED_FINGERPRINT } from "../../store/idempotency";
import { migrationProvider } from "../../store/migrations";
import { dumpAllRows } from "../support/dump-rows";
import { bootServer, freshDataDir, TEST_ENGINE } from "../support/harness";
import { CARDS } from "../support/payments";
import { auth, seedMerchant } from "../support/seed";

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** Every way a stored SHA-256 digest of `text` could be written down. */
function digestForms(text: string): string[] {
  const digest = sha256(text);
  return [digest.toString("hex"), digest.toString("hex").toUpperCase(), digest.toString("base64"), digest.toString("base64url")];
}

describe("card data at rest", () => {
  it("no table row and no byte of the database or its WAL holds a SHA-256 of a tokenization body, a PAN or a CVC", async () => {
    const server = await bootServer();
    try {
      const m = await seedMerchant(server);
      const year = new Date().getUTCFullYear() + 2;
      const sent: Array<{ body: Record<string, unknown>; pan: string; cvc: string; token: string }> = [];
      for (const [i, pan] of Object.values(CARDS).entries()) {
        const cvc = String(100 + i * 111);
        const body = { card: { number: pan, exp_month: 12, exp_year: year, cvc } };
        const res = await server.request("/v1/tokens", { method: "POST", headers: auth(m.publishable), json: body });
        expect(res.status).toBe(201);
        sent.push({ body, pan, cvc, token: (await res.json()).token });
      }

      const needles = new Map<string, string>();
      for (const { body, pan, cvc } of sent) {
        const canonical = canonicalJson(body);
        const sources = [canonical, JSON.stringify(body), `POST\n/v1/tokens\n${canonical}\n`, pan, cvc, `${pan}${cvc}`];
        for (const source of sources) for (const form of digestForms(source)) needles.set(form, source);
      }

      const { text, rows, tables } = await dumpAllRows(server.app.db);
      // Not a vacuous pass: the rows that held the digest were read.
      expect(tables.idempotency_keys).toBeGreaterThanOrEqual(sent.length);
      expect(tables.card_tokens).toBe(sent.length);
      expect(rows).toBeGreaterThan(2 * sent.length);
      for (const { token } of sent) expect(text).toContain(token);
      for (const [needle, source] of needles) expect(text.includes(needle), `a row holds a digest of ${JSON.stringify(source)}`).toBe(false);

      if (TEST_ENGINE !== "sqlite") return;
      const raw = Buffer.concat([DATABASE_FILE, `${DATABASE_FILE}-wal`].map((name) => readFileSync(join(server.dataDir, name))));
      expect(raw.length).toBeGreaterThan(4096);
      for (const { token } of sent) expect(raw.includes(token), `the raw files hold ${token}`).toBe(true);
      for (const [needle, source] of needles) expect(raw.includes(needle), `the raw files hold a digest of ${JSON.stringify(source)}`).toBe(false);
      for (const [, source] of needles) expect(raw.includes(sha256(source)), `the raw files hold the binary digest of ${JSON.stringify(source)}`).toBe(false);
    } finally {
      await server.stop();
    }
  });

  // Reads the SQLite file after the upgrade.
  it.skipIf(TEST_ENGINE !== "sqlite")("upgrading scrubs fingerprints written unkeyed, and a scrubbed key still replays", async () => {
    const dataDir = freshDataDir();
    const store = openSqliteStore(dataDir);
    const legacy = sha256(`POST\n/v1/tokens\n${canonicalJson({ card: { number: CARDS.approved, cvc: "123" } })}\n`).toString("hex");
    const scope = { apiKeyId: "key_old", method: "POST", path: "/v1/tokens", key: "k-legacy" };
    try {
      await new Migrator({ db: store.db, provider: migrationProvider }).migrateTo("001_init");
      await store.db
        .insertInto("idempotency_keys")
        .values({ api_key_id: scope.apiKeyId, method: scope.method, path: scope.path, key: scope.key, fingerprint: legacy, state: "done", locked_at: 1, response_status: 201, response_headers: "{}", response_body: '{"token":"tok_test_x"}', created_at: Date.now(), expires_at: Date.now() + 60_000 })
        .execute();
      expect(await migrate(store.db)).toContain("003_scrub_unkeyed_fingerprints");
      const row = await store.db.selectFrom("idempotency_keys").select("fingerprint").executeTakeFirstOrThrow();
      expect(row.fingerprint).toBe(SCRUBBED_FINGERPRINT);
      const claim = await claimIdempotencyKey(store.db, scope, "any-keyed-fingerprint", Date.now(), 60_000, 60_000);
      expect(claim).toEqual({ kind: "replay", response: { status: 201, headers: {}, body: '{"token":"tok_test_x"}' } });
    } finally {
      await store.close();
    }
    const raw = readFileSync(join(dataDir, DATABASE_FILE));
    expect(raw.includes("tok_test_x")).toBe(true);
    expect(raw.includes(legacy)).toBe(false);
  });
});
