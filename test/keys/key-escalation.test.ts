import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/keys/api-keys";
import { openSandbox, type SandboxInfo } from "../../server/sandbox/sandbox";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { byOperator } from "../../server/audit/audit-actor";

/** The attacks of issue 12, item 1, replayed on a sandbox as `paygate sandbox` seeds it. */
describe("key management cannot climb above the caller's rights", () => {
  let server: TestServer;
  let sandbox: SandboxInfo;
  let adminKeyId: string;
  // A fresh sandbox per attack: one that succeeds must not decide the next.
  beforeEach(async () => {
    server = await bootServer();
    sandbox = await openSandbox(server.app);
    const list = await server.request("/v1/api-keys", { headers: auth(sandbox.keys.admin) });
    expect(list.status).toBe(200);
    adminKeyId = ((await list.json()).data as { id: string; role: string }[]).find((k) => k.role === "admin")?.id as string;
    expect(adminKeyId).toMatch(/^key_/);
    expect(await adminWorks()).toBe(true);
  });
  afterEach(() => server.stop());

  async function adminWorks(): Promise<boolean> {
    return (await server.request("/admin/merchants", { headers: auth(sandbox.keys.admin) })).status === 200;
  }

  async function liveKeysOfSandbox(): Promise<number> {
    const rows = await server.app.db.selectFrom("api_keys").select("id").where("merchant_id", "=", sandbox.merchant.id).where("mode", "=", "live").execute();
    return rows.length;
  }

  it("the sandbox's merchant secret key cannot rotate the sandbox admin key", async () => {
    const res = await server.request(`/v1/api-keys/${adminKeyId}/rotate`, { method: "POST", headers: auth(sandbox.keys.secret) });
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error).toMatchObject({ type: "authentication_error", code: "insufficient_permissions" });
    expect(JSON.stringify(body)).not.toMatch(/sk_(test|live)_/);
    expect(await adminWorks()).toBe(true);
  });

  it("a keys:read,keys:write key can neither rotate the admin key nor, with a test admin key, mint sk_live_", async () => {
    const created = await server.request("/v1/api-keys", { method: "POST", headers: auth(sandbox.keys.secret), json: { name: "narrow", scopes: ["keys:read", "keys:write"] } });
    expect(created.status).toBe(201);
    const narrow = (await created.json()).key as string;

    const rotate = await server.request(`/v1/api-keys/${adminKeyId}/rotate`, { method: "POST", headers: auth(narrow) });
    expect(rotate.status).toBe(403);
    expect((await rotate.json()).error.code).toBe("insufficient_permissions");
    expect(await adminWorks()).toBe(true);

    const mint = await server.request(`/admin/merchants/${sandbox.merchant.id}/api-keys`, {
      method: "POST",
      headers: auth(sandbox.keys.admin),
      json: { name: "escalated", role: "admin", mode: "live" },
    });
    expect(mint.status).toBe(403);
    const body = await mint.json();
    expect(body.error.code).toBe("insufficient_permissions");
    expect(JSON.stringify(body)).not.toContain("sk_live_");
    expect(await liveKeysOfSandbox()).toBe(0);
  });

  it("an sk_test_ key cannot rotate a live key of its own merchant, nor learn that it exists", async () => {
    const live = await createApiKey(server.app.db, { merchantId: sandbox.merchant.id, name: "production", type: "secret", mode: "live", role: "merchant" }, undefined, byOperator());
    const res = await server.request(`/v1/api-keys/${live.id}/rotate`, { method: "POST", headers: auth(sandbox.keys.secret) });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "api_key_not_found" });
    expect(JSON.stringify(body)).not.toContain("sk_live_");
    const stillWorks = await server.request("/v1/api-keys", { headers: auth(live.key as string) });
    expect(stillWorks.status).toBe(200);

    const revoke = await server.request(`/v1/api-keys/${live.id}`, { method: "DELETE", headers: auth(sandbox.keys.secret) });
    expect(revoke.status).toBe(404);
    expect((await revoke.json()).error.code).toBe("api_key_not_found");
  });

  it("a merchant key cannot revoke the admin key and lock the operator out", async () => {
    const res = await server.request(`/v1/api-keys/${adminKeyId}`, { method: "DELETE", headers: auth(sandbox.keys.secret) });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("insufficient_permissions");
    expect(await adminWorks()).toBe(true);
  });

  it("a key may rotate and revoke itself", async () => {
    const created = await server.request("/v1/api-keys", { method: "POST", headers: auth(sandbox.keys.secret), json: { name: "self", scopes: ["keys:read", "keys:write"] } });
    expect(created.status).toBe(201);
    const self = await created.json();
    const rotated = await server.request(`/v1/api-keys/${self.id}/rotate`, { method: "POST", headers: auth(self.key) });
    expect(rotated.status).toBe(200);
    const fresh = (await rotated.json()).key as string;
    const revoked = await server.request(`/v1/api-keys/${self.id}`, { method: "DELETE", headers: auth(fresh) });
    expect(revoked.status).toBe(200);
    expect((await revoked.json()).status).toBe("revoked");
    const after = await server.request("/v1/api-keys", { headers: auth(fresh) });
    expect((await after.json()).error.code).toBe("invalid_api_key");
  });
});
