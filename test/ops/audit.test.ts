import { rmSync } from "node:fs";
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, type Store } from "../../store/database";
import type { AuditLogRow } from "../../store/schema";
import { runCli } from "../support/cli";
import { expectError } from "../support/errors";
import { bootServer, dropEngineData, freshDataDir, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { openTestStore } from "../support/test-store";
import { writeEvent } from "../webhooks/support";

type Row = Pick<AuditLogRow, "actor_type" | "actor_id" | "action" | "target_type" | "target_id" | "merchant_id">;

/** The audit records written while `fn` ran. */
async function recordsDuring(db: Store["db"], fn: () => Promise<unknown>): Promise<Row[]> {
  const before = new Set((await db.selectFrom("audit_log").select("id").execute()).map((r) => r.id));
  await fn();
  const rows = await db.selectFrom("audit_log").selectAll().orderBy("id").execute();
  return rows
    .filter((r) => !before.has(r.id))
    .map(({ actor_type, actor_id, action, target_type, target_id, merchant_id }) => ({ actor_type, actor_id, action, target_type, target_id, merchant_id }));
}

const auditDump = async (db: Store["db"]) => JSON.stringify(await db.selectFrom("audit_log").selectAll().execute());

describe("audit log over HTTP", () => {
  let server: TestServer;
  let m: SeededMerchant;
  let adminKeyId: string;
  /** Plaintexts this test saw: none may reach the audit log. */
  const plaintexts: string[] = [];
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server, "Audited");
    adminKeyId = (await server.app.db.selectFrom("api_keys").select("id").where("merchant_id", "=", m.merchant.id).where("role", "=", "admin").executeTakeFirstOrThrow()).id;
    plaintexts.push(m.secret, m.publishable, m.admin);
  });
  afterAll(() => server.stop());

  const call = async (key: string, method: string, path: string, json?: unknown) => {
    const res = await server.request(path, { method, headers: auth(key), ...(json !== undefined && { json }) });
    const body = res.status === 204 ? {} : await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  const one = (actor: string, action: string, targetType: string, targetId: string, merchantId: string | null = m.merchant.id): Row => ({
    actor_type: "api_key",
    actor_id: actor,
    action,
    target_type: targetType,
    target_id: targetId,
    merchant_id: merchantId,
  });

  it("records each merchant and key change once, with the calling key as actor", async () => {
    let merchant: { id: string } = { id: "" };
    expect(await recordsDuring(server.app.db, async () => (merchant = await call(m.admin, "POST", "/admin/merchants", { name: "New" })))).toEqual([
      one(adminKeyId, "merchant.created", "merchant", merchant.id, merchant.id),
    ]);
    let key: { id: string; key: string } = { id: "", key: "" };
    expect(await recordsDuring(server.app.db, async () => (key = await call(m.secret, "POST", "/v1/api-keys", { name: "k" })))).toEqual([
      one(m.secretId, "api_key.created", "api_key", key.id),
    ]);
    plaintexts.push(key.key);
    let minted: { id: string; key: string } = { id: "", key: "" };
    expect(await recordsDuring(server.app.db, async () => (minted = await call(m.admin, "POST", `/admin/merchants/${merchant.id}/api-keys`, { name: "m" })))).toEqual([
      one(adminKeyId, "api_key.created", "api_key", minted.id, merchant.id),
    ]);
    plaintexts.push(minted.key);
    let rotated: { key: string } = { key: "" };
    expect(await recordsDuring(server.app.db, async () => (rotated = await call(m.secret, "POST", `/v1/api-keys/${key.id}/rotate`, {})))).toEqual([
      one(m.secretId, "api_key.rotated", "api_key", key.id),
    ]);
    plaintexts.push(rotated.key);
    expect(await recordsDuring(server.app.db, () => call(m.secret, "DELETE", `/v1/api-keys/${key.id}`))).toEqual([one(m.secretId, "api_key.revoked", "api_key", key.id)]);
  });

  it("records connector account, endpoint, routing and replay changes", async () => {
    const base = `/admin/merchants/${m.merchant.id}/connector-accounts`;
    let account: { id: string } = { id: "" };
    const body = { connector_id: "nmi", mode: "test", key_kind: "security_key", label: "audited", credential_ref: "env://NMI_KEY" };
    expect(await recordsDuring(server.app.db, async () => (account = await call(m.admin, "POST", base, body)))).toEqual([
      one(adminKeyId, "connector_account.created", "connector_account", account.id),
    ]);
    expect(await recordsDuring(server.app.db, () => call(m.admin, "PATCH", `${base}/${account.id}`, { label: "renamed" }))).toEqual([
      one(adminKeyId, "connector_account.updated", "connector_account", account.id),
    ]);
    expect(await recordsDuring(server.app.db, () => call(m.admin, "DELETE", `${base}/${account.id}`))).toEqual([
      one(adminKeyId, "connector_account.deleted", "connector_account", account.id),
    ]);

    let endpoint: { id: string; secret: string } = { id: "", secret: "" };
    expect(
      await recordsDuring(server.app.db, async () => (endpoint = await call(m.secret, "POST", "/v1/webhook_endpoints", { url: "https://example.com/a", event_types: ["*"] }))),
    ).toEqual([one(m.secretId, "webhook_endpoint.created", "webhook_endpoint", endpoint.id)]);
    plaintexts.push(endpoint.secret);
    expect(await recordsDuring(server.app.db, () => call(m.secret, "PATCH", `/v1/webhook_endpoints/${endpoint.id}`, { description: "d" }))).toEqual([
      one(m.secretId, "webhook_endpoint.updated", "webhook_endpoint", endpoint.id),
    ]);
    let rotated: { secret: string } = { secret: "" };
    expect(await recordsDuring(server.app.db, async () => (rotated = await call(m.secret, "POST", `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, {})))).toEqual([
      one(m.secretId, "webhook_endpoint.secret_rotated", "webhook_endpoint", endpoint.id),
    ]);
    plaintexts.push(rotated.secret);
    expect(await recordsDuring(server.app.db, () => call(m.secret, "PUT", "/v1/routing", { connectors: ["mock"] }))).toEqual([
      one(m.secretId, "routing.updated", "routing", "test"),
    ]);
    const event = await writeEvent(server.app.db, m.merchant.id, "payment.captured");
    expect(await recordsDuring(server.app.db, () => call(m.secret, "POST", `/v1/events/${event.id}/replay`, {}))).toEqual([
      one(m.secretId, "webhook.replayed", "event", event.id),
    ]);
    expect(await recordsDuring(server.app.db, () => call(m.secret, "DELETE", `/v1/webhook_endpoints/${endpoint.id}`))).toEqual([
      one(m.secretId, "webhook_endpoint.deleted", "webhook_endpoint", endpoint.id),
    ]);
  });

  it("records an idempotent replay's change once", async () => {
    const create = () => server.request("/admin/merchants", { method: "POST", headers: auth(m.admin, "audit-once"), json: { name: "Once" } });
    const rows = await recordsDuring(server.app.db, async () => {
      expect((await create()).status).toBe(201);
      expect((await create()).headers.get("idempotent-replayed")).toBe("true");
    });
    expect(rows.map((r) => r.action)).toEqual(["merchant.created"]);
  });

  it("records nothing for a change that failed", async () => {
    const base = `/admin/merchants/${m.merchant.id}/connector-accounts`;
    const body = { connector_id: "nmi", mode: "test", key_kind: "security_key", label: "taken", credential_ref: "env://NMI_KEY" };
    await call(m.admin, "POST", base, body);
    const revoked = await call(m.secret, "POST", "/v1/api-keys", { name: "gone" });
    plaintexts.push(revoked.key);
    await call(m.secret, "DELETE", `/v1/api-keys/${revoked.id}`);
    const failed = await recordsDuring(server.app.db, async () => {
      await expectError(await server.request(base, { method: "POST", headers: auth(m.admin), json: body }), 409, "conflict");
      await expectError(await server.request(`/v1/api-keys/${revoked.id}/rotate`, { method: "POST", headers: auth(m.secret), json: {} }), 409, "api_key_revoked");
      await expectError(await server.request("/v1/routing", { method: "PUT", headers: auth(m.secret), json: { connectors: ["mock", "mock"] } }), 400, "parameter_invalid");
    });
    expect(failed).toEqual([]);
  });

  it("lists the log to admin keys only, newest first, with limit, starting_after, since and merchant", async () => {
    const get = (key: string, query = "") => server.request(`/admin/audit${query}`, { headers: { authorization: `Bearer ${key}` } });
    await expectError(await get(m.secret), 403, "insufficient_permissions");
    await expectError(await get(m.publishable), 403, "insufficient_permissions");
    const all = await (await get(m.admin, "?limit=100")).json();
    expect(all.object).toBe("list");
    const times = all.data.map((r: { created_at: string }) => r.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(all.data[0]).toMatchObject({ object: "audit_record", actor: m.secretId, actor_type: "api_key", action: "api_key.revoked", target: { type: "api_key" } });
    const first = await (await get(m.admin, "?limit=2")).json();
    expect(first.has_more).toBe(true);
    const second = await (await get(m.admin, `?limit=2&starting_after=${first.data[1].id}`)).json();
    expect([...first.data, ...second.data].map((r: { id: string }) => r.id)).toEqual(all.data.slice(0, 4).map((r: { id: string }) => r.id));
    const since = all.data[2].created_at;
    const recent = await (await get(m.admin, `?limit=100&since=${encodeURIComponent(since)}`)).json();
    expect(recent.data.every((r: { created_at: string }) => r.created_at >= since)).toBe(true);
    expect(recent.data.length).toBeLessThan(all.data.length);
    const mine = await (await get(m.admin, `?limit=100&merchant=${m.merchant.short_id}`)).json();
    expect(mine.data.length).toBeGreaterThan(0);
    expect(mine.data.every((r: { merchant_id: string }) => r.merchant_id === m.merchant.id)).toBe(true);
    await expectError(await get(m.admin, "?since=yesterday"), 400, "parameter_invalid");
  });

  it("has no route that changes or deletes a record", async () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      await expectError(await server.request("/admin/audit", { method, headers: auth(m.admin), json: {} }), 405, "method_not_allowed");
    }
  });

  it("never holds a key plaintext or signing secret", async () => {
    const dump = await auditDump(server.app.db);
    expect(dump).toContain(m.secretId);
    for (const value of plaintexts) expect(dump).not.toContain(value);
  });
});

describe("audit log over the CLI", () => {
  const dataDir = freshDataDir();
  const operator = userInfo().username;
  let store: Store;
  beforeAll(async () => {
    store = await openTestStore(dataDir);
    await migrate(store.db);
  });
  afterAll(async () => {
    await store.close();
    await dropEngineData(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cli = async (args: string[], input?: string) => {
    const res = await runCli([...args, "--data", dataDir, "--json"], input === undefined ? {} : { input });
    if (res.code !== 0) throw new Error(`paygate ${args.join(" ")}: ${res.code} ${res.stderr}`);
    return JSON.parse(res.stdout);
  };
  const cliRow = (action: string, targetType: string, targetId: string, merchantId: string | null): Row => ({
    actor_type: "cli",
    actor_id: operator,
    action,
    target_type: targetType,
    target_id: targetId,
    merchant_id: merchantId,
  });

  it("records every CLI change once as cli:<os user>, and secrets by path and version only", async () => {
    let merchant: { id: string } = { id: "" };
    expect(await recordsDuring(store.db, async () => (merchant = await cli(["merchants", "create", "--name", "Shop"])))).toEqual([
      cliRow("merchant.created", "merchant", merchant.id, merchant.id),
    ]);
    let key: { id: string; key: string } = { id: "", key: "" };
    expect(await recordsDuring(store.db, async () => (key = await cli(["keys", "create", "--merchant", merchant.id, "--name", "ops"])))).toEqual([
      cliRow("api_key.created", "api_key", key.id, merchant.id),
    ]);
    let rotated: { key: string } = { key: "" };
    expect(await recordsDuring(store.db, async () => (rotated = await cli(["keys", "rotate", key.id, "--merchant", merchant.id])))).toEqual([
      cliRow("api_key.rotated", "api_key", key.id, merchant.id),
    ]);
    expect(await recordsDuring(store.db, () => cli(["keys", "revoke", key.id, "--merchant", merchant.id]))).toEqual([cliRow("api_key.revoked", "api_key", key.id, merchant.id)]);

    const secretValue = "nmi-security-key-AUDIT-7f3c91";
    expect(await recordsDuring(store.db, () => cli(["secrets", "put", "shop/nmi"], secretValue))).toEqual([cliRow("secret.version_created", "secret", "shop/nmi", null)]);
    const versions = await store.db.selectFrom("audit_log").select("details").where("action", "=", "secret.version_created").execute();
    expect(versions.map((r) => JSON.parse(r.details as string))).toEqual([{ version: 1 }]);

    let account: { id: string } = { id: "" };
    const create = ["accounts", "create", "--merchant", merchant.id, "--connector", "nmi", "--mode", "test", "--key-kind", "security_key", "--label", "n", "--credential-ref", "secret://shop/nmi"];
    expect(await recordsDuring(store.db, async () => (account = await cli(create)))).toEqual([cliRow("connector_account.created", "connector_account", account.id, merchant.id)]);
    const failed = await recordsDuring(store.db, async () => {
      expect((await runCli([...create, "--data", dataDir])).stderr).toContain('The label "n" is already used');
    });
    expect(failed).toEqual([]);
    expect(await recordsDuring(store.db, () => cli(["accounts", "update", account.id, "--merchant", merchant.id, "--label", "m"]))).toEqual([
      cliRow("connector_account.updated", "connector_account", account.id, merchant.id),
    ]);
    expect(await recordsDuring(store.db, () => cli(["accounts", "delete", account.id, "--merchant", merchant.id]))).toEqual([
      cliRow("connector_account.deleted", "connector_account", account.id, merchant.id),
    ]);

    const event = await writeEvent(store.db, merchant.id, "payment.captured");
    expect(await recordsDuring(store.db, () => cli(["webhooks", "replay", event.id]))).toEqual([cliRow("webhook.replayed", "event", event.id, merchant.id)]);
    expect(await recordsDuring(store.db, () => cli(["webhooks", "replay", "--dead"]))).toEqual([cliRow("webhook.replayed", "dead_letter_queue", "*", null)]);

    const dump = await auditDump(store.db);
    expect(dump).toContain("shop/nmi");
    for (const value of [secretValue, key.key, rotated.key]) expect(dump).not.toContain(value);
  });

  it("lists the log with `paygate audit list`, newest first, filtered by --since and --merchant", async () => {
    const all = await cli(["audit", "list"]);
    expect(all.data.length).toBeGreaterThan(5);
    expect(all.data[0]).toMatchObject({ actor: `cli:${operator}`, actor_type: "cli", action: "webhook.replayed", target: { type: "dead_letter_queue", id: "*" } });
    expect((await cli(["audit", "list", "--limit", "2"])).data).toHaveLength(2);
    const since = all.data[1].created_at;
    expect((await cli(["audit", "list", "--since", since])).data.every((r: { created_at: string }) => r.created_at >= since)).toBe(true);
    const merchantId = all.data.find((r: { merchant_id: string | null }) => r.merchant_id !== null).merchant_id;
    expect((await cli(["audit", "list", "--merchant", merchantId])).data.every((r: { merchant_id: string }) => r.merchant_id === merchantId)).toBe(true);
    const table = await runCli(["audit", "list", "--data", dataDir]);
    expect(table.stdout).toContain(`cli:${operator}`);
    expect(table.stdout).toContain("secret:shop/nmi");
  });
});

describe("audit log of what paygate seeds itself", () => {
  it("records dev mode's merchant and key as the operator's", async () => {
    const server = await bootServer({ dev: true });
    try {
      const rows = await server.app.db.selectFrom("audit_log").select(["actor_type", "actor_id", "action"]).orderBy("id").execute();
      expect(rows.map((r) => r.action).sort()).toEqual(["api_key.created", "connector_account.created", "merchant.created", "secret.version_created"]);
      expect(new Set(rows.map((r) => `${r.actor_type}:${r.actor_id}`))).toEqual(new Set([`cli:${userInfo().username}`]));
    } finally {
      await server.stop();
    }
  });
});
