import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cipher } from "../../server/secrets/cipher";
import { putSecret, resolveCredential } from "../../server/secrets/secret-store";
import { bootServer, TEST_ENGINE, type TestServer } from "../support/harness";
import { runCli } from "../support/cli";
import { auth, liveSecretKey, seedMerchant, type SeededMerchant } from "../support/seed";
import { expectStored, storedData } from "../support/raw-files";
import { expectError } from "../support/errors";
import { byOperator } from "../../server/audit/audit-actor";

const STRIPE_SECRET = JSON.stringify({ api_key: "sk_live_VERYSECRETSTRIPEKEY", webhook_secret: "whsec_VERYSECRETHOOK" });

describe("connector accounts admin API", () => {
  let server: TestServer;
  let m: SeededMerchant;
  /** Live accounts are managed with a live admin key: a test key reaches test accounts only. */
  let liveAdmin: string;
  let base: string;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
    liveAdmin = await liveSecretKey(server, m.merchant.id, "admin");
    base = `/admin/merchants/${m.merchant.short_id}/connector-accounts`;
    await putSecret(server.app, "acme/stripe", STRIPE_SECRET, byOperator());
    await putSecret(server.app, "acme/mock", "mock-credential", byOperator());
  });
  afterAll(() => server.stop());

  const create = (body: Record<string, unknown>, key = body.mode === "test" ? m.admin : liveAdmin) => server.request(base, { method: "POST", headers: auth(key), json: body });
  const stripeBody = (label: string, extra: Record<string, unknown> = {}) => ({
    connector_id: "stripe",
    mode: "live",
    key_kind: "api_key",
    label,
    credential_ref: "secret://acme/stripe",
    ...extra,
  });

  it("creates an account: 201 with the full record, never the secret", async () => {
    const res = await create(stripeBody("eu", { is_default: true }));
    expect(res.status).toBe(201);
    const text = await res.text();
    const account = JSON.parse(text);
    expect(account).toMatchObject({
      object: "connector_account",
      merchant_id: m.merchant.id,
      merchant_short_id: m.merchant.short_id,
      connector_id: "stripe",
      mode: "live",
      key_kind: "api_key",
      label: "eu",
      is_default: true,
      credential_ref: "secret://acme/stripe",
      is_active: true,
    });
    expect(account.short_id).toMatch(/^ca_[a-z0-9]{10}$/);
    expect(account.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(text).not.toContain("VERYSECRET");
  });

  it("enforces one default per (merchant, connector, mode, key_kind) with a generic 409", async () => {
    const res = await create(stripeBody("us", { is_default: true }));
    expect(res.status).toBe(409);
    const { error } = await res.json();
    expect(error).toMatchObject({ type: "invalid_request_error", code: "conflict" });
    expect(error.message).toMatch(/default/);
  });

  it("enforces label uniqueness per (merchant, connector, mode) with a generic 409", async () => {
    const res = await create(stripeBody("eu"));
    expect((await expectError(res, 409, "conflict")).message).toMatch(/label "eu"/);
    const otherMode = await create({ ...stripeBody("eu"), mode: "test" });
    expect(otherMode.status).toBe(201);
  });

  it("validates connector, key kind, mode and credential_ref", async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ ...stripeBody("a"), connector_id: "paypal" }, "parameter_invalid", "connector_id"],
      [{ ...stripeBody("a"), key_kind: "security_key" }, "parameter_invalid", "key_kind"],
      [{ ...stripeBody("a"), connector_id: "mock" }, "parameter_invalid", "mode"],
      [{ ...stripeBody("a"), credential_ref: "https://vault/x" }, "parameter_invalid", "credential_ref"],
      [{ ...stripeBody("a"), credential_ref: "secret://missing/path" }, "parameter_invalid", "credential_ref"],
      [{ ...stripeBody("a"), credential_ref: "secret://acme/mock" }, "parameter_invalid", "credential_ref"],
      [{ ...stripeBody("a"), colour: "x" }, "parameter_unknown", "colour"],
    ];
    for (const [body, code, param] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error).toMatchObject({ code, param });
    }
  });

  it("lists, gets by short id or UUID, patches and soft-deletes", async () => {
    const created = await (await create({ connector_id: "mock", mode: "test", key_kind: "api_key", label: "sandbox", credential_ref: "secret://acme/mock" })).json();
    const byShort = await (await server.request(`${base}/${created.short_id}`, { headers: auth(m.admin) })).json();
    const byUuid = await (await server.request(`${base}/${created.id.toUpperCase()}`, { headers: auth(m.admin) })).json();
    expect(byShort.id).toBe(created.id);
    expect(byUuid.id).toBe(created.id);

    const patched = await server.request(`${base}/${created.short_id}`, { method: "PATCH", headers: auth(m.admin), json: { label: "sandbox-2", is_default: true } });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ label: "sandbox-2", is_default: true });

    const deleted = await server.request(`${base}/${created.short_id}`, { method: "DELETE", headers: auth(m.admin) });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    const after = await (await server.request(`${base}/${created.short_id}`, { headers: auth(m.admin) })).json();
    expect(after).toMatchObject({ is_active: false, is_default: false });

    const active = await (await server.request(base, { headers: auth(m.admin) })).json();
    expect(active.data.map((a: { id: string }) => a.id)).not.toContain(created.id);
    const all = await (await server.request(`${base}?include_inactive=true`, { headers: auth(m.admin) })).json();
    expect(all.data.map((a: { id: string }) => a.id)).toContain(created.id);
  });

  it("never reactivates: PATCH is_active is refused and a deleted account cannot be changed", async () => {
    const created = await (await create(stripeBody("temp"))).json();
    await server.request(`${base}/${created.id}`, { method: "DELETE", headers: auth(liveAdmin) });
    const reactivate = await server.request(`${base}/${created.id}`, { method: "PATCH", headers: auth(liveAdmin), json: { is_active: true } });
    expect(reactivate.status).toBe(400);
    expect((await reactivate.json()).error).toMatchObject({ code: "parameter_invalid", param: "is_active" });
    const relabel = await server.request(`${base}/${created.id}`, { method: "PATCH", headers: auth(liveAdmin), json: { label: "back" } });
    await expectError(relabel, 409, "connector_account_inactive");
    // A deleted account frees its label.
    expect((await create(stripeBody("temp"))).status).toBe(201);
  });

  it("requires Idempotency-Key on admin PATCH and DELETE", async () => {
    const created = await (await create(stripeBody("idem"))).json();
    const headers = { authorization: `Bearer ${liveAdmin}` };
    const patch = await server.request(`${base}/${created.id}`, { method: "PATCH", headers, json: { label: "x" } });
    expect((await patch.json()).error.code).toBe("missing_idempotency_key");
    const del = await server.request(`${base}/${created.id}`, { method: "DELETE", headers });
    expect((await del.json()).error.code).toBe("missing_idempotency_key");
  });

  it("refuses non-admin keys with 403, and hides other merchants' accounts with 404", async () => {
    const res = await create(stripeBody("x"), m.secret);
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("insufficient_permissions");
    const other = await seedMerchant(server, "Other");
    const mine = await (await create(stripeBody("mine"))).json();
    const foreign = await server.request(`/admin/merchants/${other.merchant.id}/connector-accounts/${mine.short_id}`, { headers: auth(liveAdmin) });
    expect(foreign.status).toBe(404);
    expect((await foreign.json()).error.code).toBe("connector_account_not_found");
  });

  it("shows the same accounts to the CLI and the API", async () => {
    const cli = await runCli(["accounts", "list", "--merchant", m.merchant.short_id, "--data", server.dataDir, "--json"]);
    expect(cli.code).toBe(0);
    const api = await (await server.request(base, { headers: auth(liveAdmin) })).json();
    const cliLive = JSON.parse(cli.stdout).data.filter((a: { mode: string }) => a.mode === "live");
    expect(cliLive.map((a: { id: string }) => a.id).sort()).toEqual(api.data.map((a: { id: string }) => a.id).sort());

    const made = await runCli([
      "accounts", "create", "--merchant", m.merchant.id, "--connector", "nmi", "--mode", "live", "--key-kind", "security_key",
      "--label", "cli", "--credential-ref", "env://NMI_KEY", "--data", server.dataDir, "--json",
    ]);
    expect(made.code).toBe(0);
    const fromCli = JSON.parse(made.stdout);
    const seen = await (await server.request(`${base}/${fromCli.short_id}`, { headers: auth(liveAdmin) })).json();
    expect(seen).toMatchObject({ connector_id: "nmi", label: "cli", credential_ref: "env://NMI_KEY" });
    const deleted = await runCli(["accounts", "delete", fromCli.short_id, "--merchant", m.merchant.short_id, "--data", server.dataDir]);
    expect(deleted.code).toBe(0);
    expect((await (await server.request(`${base}/${fromCli.short_id}`, { headers: auth(liveAdmin) })).json()).is_active).toBe(false);
  });

  it("keeps live accounts out of a test admin key's reach: it cannot list, read, create, rebind or delete them", async () => {
    const live = await (await create(stripeBody("reach"))).json();
    expect(live.mode).toBe("live");
    const made = await create(stripeBody("reach-2"), m.admin);
    expect(await expectError(made, 403, "insufficient_permissions")).toMatchObject({ param: "mode" });
    await expectError(await server.request(`${base}/${live.short_id}`, { headers: auth(m.admin) }), 404, "connector_account_not_found");
    const rebind = await server.request(`${base}/${live.short_id}`, { method: "PATCH", headers: auth(m.admin), json: { credential_ref: "secret://acme/mock" } });
    await expectError(rebind, 404, "connector_account_not_found");
    await expectError(await server.request(`${base}/${live.short_id}`, { method: "DELETE", headers: auth(m.admin) }), 404, "connector_account_not_found");
    const listed = await (await server.request(`${base}?include_inactive=true&limit=100`, { headers: auth(m.admin) })).json();
    expect(listed.data.length).toBeGreaterThan(0);
    expect(listed.data.every((a: { mode: string }) => a.mode === "test")).toBe(true);
    const after = await (await server.request(`${base}/${live.short_id}`, { headers: auth(liveAdmin) })).json();
    expect(after).toMatchObject({ is_active: true, credential_ref: "secret://acme/stripe" });
  });

  it("never takes paygate's own settings as a credential: env://PAYGATE_* is refused", async () => {
    for (const variable of ["PAYGATE_MASTER_KEY", "paygate_master_key", "PAYGATE_NEW_MASTER_KEY"]) {
      const res = await create({ connector_id: "nmi", mode: "live", key_kind: "security_key", label: `env-${variable}`, credential_ref: `env://${variable}` });
      expect(await expectError(res, 400, "parameter_invalid")).toMatchObject({ param: "credential_ref" });
    }
    const fine = await create({ connector_id: "nmi", mode: "live", key_kind: "security_key", label: "env-ok", credential_ref: "env://NMI_SECURITY_KEY" });
    expect(fine.status).toBe(201);
  });

  it("resolves a credential updated by `secrets put` in another process on the next look-up", async () => {
    expect(await resolveCredential(server.app, "secret://acme/stripe")).toBe(STRIPE_SECRET);
    const rotated = JSON.stringify({ api_key: "sk_live_ROTATED", webhook_secret: "whsec_ROTATED" });
    const cli = await runCli(["secrets", "put", "acme/stripe", "--data", server.dataDir], { input: rotated });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("version 2");
    expect(cli.stdout).not.toContain("ROTATED");
    expect(await resolveCredential(server.app, "secret://acme/stripe")).toBe(rotated);
    const list = await runCli(["secrets", "list", "--data", server.dataDir]);
    expect(list.stdout).toMatch(/acme\/stripe\s+2/);
    expect(list.stdout).not.toContain("ROTATED");
  });

  it("keeps secret values out of the database files and the log", async () => {
    await server.app.auth.flushLastUsed();
    const contents = (await storedData(server.dataDir)) + server.readLog();
    expectStored(contents, "secret://acme/stripe", "acme/mock");
    expect(contents).not.toContain("VERYSECRET");
    expect(contents).not.toContain("ROTATED");
    expect(contents).not.toContain("mock-credential");
  });
});

describe("routing", () => {
  it("sets and reads the priority list per mode, refusing the simulator in live mode", async () => {
    const server = await bootServer();
    try {
      const test = await seedMerchant(server);
      const live = await seedMerchant(server, "Live", "live");
      expect(await (await server.request("/v1/routing", { headers: auth(test.secret) })).json()).toEqual({ object: "routing", mode: "test", connectors: [], updated_at: null });
      const put = await server.request("/v1/routing", { method: "PUT", headers: auth(test.secret), json: { connectors: ["stripe", "mock"] } });
      expect(put.status).toBe(200);
      expect(await (await server.request("/v1/routing", { headers: auth(test.secret) })).json()).toMatchObject({ mode: "test", connectors: ["stripe", "mock"] });
      const liveMock = await server.request("/v1/routing", { method: "PUT", headers: auth(live.secret), json: { connectors: ["mock"] } });
      expect((await liveMock.json()).error).toMatchObject({ code: "parameter_invalid", param: "connectors" });
      const duplicate = await server.request("/v1/routing", { method: "PUT", headers: auth(test.secret), json: { connectors: ["nmi", "nmi"] } });
      expect(duplicate.status).toBe(400);
      const unknown = await server.request("/v1/routing", { method: "PUT", headers: auth(test.secret), json: { connectors: ["paypal"] } });
      expect((await unknown.json()).error).toMatchObject({ code: "parameter_invalid", param: "connectors[0]" });
    } finally {
      await server.stop();
    }
  });
});

describe("master key", () => {
  // PostgreSQL requires PAYGATE_MASTER_KEY: there is no key file (test/config/defaults.test.ts).
  it.skipIf(TEST_ENGINE !== "sqlite")("creates master.key with mode 0600 when PAYGATE_MASTER_KEY is absent, and refuses a wrong key clearly", async () => {
    const server = await bootServer({ env: { PAYGATE_MASTER_KEY: "" } });
    const dataDir = server.dataDir;
    try {
      expect(statSync(join(dataDir, "master.key")).mode & 0o777).toBe(0o600);
      await putSecret(server.app, "k", "value-1", byOperator());
      await expect(resolveCredential({ db: server.app.db, cipher: new Cipher(Buffer.alloc(32, 9)) }, "secret://k")).rejects.toThrow(/master key/);
    } finally {
      await server.close();
    }
    // A whole process with the wrong key does not even start (test/security/master-key.test.ts).
    await expect(bootServer({ dataDir, env: { PAYGATE_MASTER_KEY: Buffer.alloc(32, 9).toString("base64") } })).rejects.toThrow(/invalid PAYGATE_MASTER_KEY/);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
