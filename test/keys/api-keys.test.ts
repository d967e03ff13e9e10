import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { expectError } from "../support/errors";

describe("API keys over HTTP", () => {
  let server: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
  });
  afterAll(() => server.stop());

  it("creates a secret key: plaintext once, never in the list", async () => {
    const res = await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "backend" } });
    expect(res.status).toBe(201);
    const key = await res.json();
    expect(key).toMatchObject({ object: "api_key", name: "backend", type: "secret", mode: "test", status: "active", key_prefix: "sk_test_" });
    expect(key.key).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
    expect(key.last4).toBe(key.key.slice(-4));
    expect(key.id).toMatch(/^key_/);
    expect(key.scopes).not.toContain("admin");

    const list = await (await server.request("/v1/api-keys", { headers: auth(m.secret) })).json();
    expect(list.object).toBe("list");
    const listed = list.data.find((k: { id: string }) => k.id === key.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty("key");
    expect(JSON.stringify(list)).not.toContain(key.key);

    const works = await server.request("/v1/api-keys", { headers: auth(key.key) });
    expect(works.status).toBe(200);
  });

  it("creates publishable keys that only tokenize", async () => {
    const res = await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "web", type: "publishable" } });
    const key = await res.json();
    expect(key.key).toMatch(/^pk_test_/);
    expect(key.scopes).toEqual(["tokens:write"]);
    const denied = await server.request("/v1/api-keys", { headers: auth(key.key) });
    expect(denied.status).toBe(403);
    expect((await denied.json()).error).toMatchObject({ type: "authentication_error", code: "insufficient_permissions" });
  });

  it("never grants a scope the creating key lacks", async () => {
    const narrow = await (
      await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "narrow", scopes: ["keys:write", "keys:read"] } })
    ).json();
    expect(narrow.scopes).toEqual(["keys:write", "keys:read"]);
    const escalate = await server.request("/v1/api-keys", { method: "POST", headers: auth(narrow.key), json: { name: "wider", scopes: ["payments:write"] } });
    expect(escalate.status).toBe(403);
    expect((await escalate.json()).error.code).toBe("insufficient_permissions");
    const defaulted = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(narrow.key), json: { name: "same" } })).json();
    expect(defaulted.scopes.sort()).toEqual(["keys:read", "keys:write"]);
    const adminScope = await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "x", scopes: ["admin"] } });
    expect(await expectError(adminScope, 400, "parameter_invalid")).toMatchObject({ param: "scopes" });
  });

  it("validates the body: unknown, missing and invalid fields", async () => {
    const unknown = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "a", colour: "red" } })).json();
    expect(unknown.error).toMatchObject({ code: "parameter_unknown", param: "colour" });
    const missing = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: {} })).json();
    expect(missing.error).toMatchObject({ code: "parameter_missing", param: "name" });
    const invalid = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "a", type: "magic" } })).json();
    expect(invalid.error).toMatchObject({ code: "parameter_invalid", param: "type" });
  });

  it("rotates: same id, name and scopes, new value, old value dead at once", async () => {
    const created = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "rotating", scopes: ["keys:read"] } })).json();
    expect((await server.request("/v1/api-keys", { headers: auth(created.key) })).status).toBe(200);
    const res = await server.request(`/v1/api-keys/${created.id}/rotate`, { method: "POST", headers: auth(m.secret) });
    expect(res.status).toBe(200);
    const rotated = await res.json();
    expect(rotated).toMatchObject({ id: created.id, name: "rotating", scopes: ["keys:read"], status: "active" });
    expect(rotated.key).not.toBe(created.key);
    const old = await server.request("/v1/api-keys", { headers: auth(created.key) });
    expect(old.status).toBe(401);
    expect((await old.json()).error.code).toBe("invalid_api_key");
    expect((await server.request("/v1/api-keys", { headers: auth(rotated.key) })).status).toBe(200);
  });

  it("revokes permanently", async () => {
    const created = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "doomed" } })).json();
    const res = await server.request(`/v1/api-keys/${created.id}`, { method: "DELETE", headers: auth(m.secret) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: created.id, object: "api_key", status: "revoked", revoked_at: expect.any(String) });
    const later = await server.request("/v1/api-keys", { headers: auth(created.key) });
    expect((await later.json()).error.code).toBe("invalid_api_key");
    const rotate = await server.request(`/v1/api-keys/${created.id}/rotate`, { method: "POST", headers: auth(m.secret) });
    await expectError(rotate, 409, "api_key_revoked");
  });

  it("hides other merchants' keys behind 404 api_key_not_found", async () => {
    const other = await seedMerchant(server, "Other");
    const res = await server.request(`/v1/api-keys/${m.secretId}/rotate`, { method: "POST", headers: auth(other.secret) });
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("api_key_not_found");
    const del = await server.request(`/v1/api-keys/${m.secretId}`, { method: "DELETE", headers: auth(other.secret) });
    await expectError(del, 404, "api_key_not_found");
  });

  it("lets admins create merchants and their keys, only in the admin key's mode", async () => {
    const merchant = await (await server.request("/admin/merchants", { method: "POST", headers: auth(m.admin), json: { name: "Shop" } })).json();
    expect(merchant).toMatchObject({ object: "merchant", name: "Shop", short_id: expect.stringMatching(/^mrc_[a-z0-9]{10}$/) });
    expect(merchant.id).toMatch(/^[0-9a-f-]{36}$/);
    const byShort = await (await server.request(`/admin/merchants/${merchant.short_id}`, { headers: auth(m.admin) })).json();
    expect(byShort.id).toBe(merchant.id);
    const key = await (
      await server.request(`/admin/merchants/${merchant.short_id}/api-keys`, { method: "POST", headers: auth(m.admin), json: { name: "first" } })
    ).json();
    expect(key.key).toMatch(/^sk_test_/);
    const live = await server.request(`/admin/merchants/${merchant.id}/api-keys`, { method: "POST", headers: auth(m.admin), json: { name: "live", mode: "live" } });
    expect(live.status).toBe(403);
    expect((await live.json()).error.code).toBe("insufficient_permissions");
    const list = await (await server.request("/admin/merchants?limit=1", { headers: auth(m.admin) })).json();
    expect(list.data).toHaveLength(1);
    expect(list.has_more).toBe(true);
    const missing = await server.request("/admin/merchants/mrc_0000000000", { headers: auth(m.admin) });
    await expectError(missing, 404, "merchant_not_found");
  });
});
