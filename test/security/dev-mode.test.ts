import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnectorAccount } from "../../server/accounts/accounts";
import { createApiKey } from "../../server/keys/api-keys";
import { createMerchant } from "../../server/merchants/merchants";
import { putSecret } from "../../server/secrets/secret-store";
import { runCli } from "../support/cli";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { byOperator } from "../../server/audit/audit-actor";

interface RawAnswer {
  status: number;
  body: any;
}

/** A request with exactly these headers (fetch would not let a test set Host). */
function raw(server: TestServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers: { ...headers, ...(body !== undefined && { "content-length": String(Buffer.byteLength(body)) }) } }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const countKeys = async (server: TestServer) => Number((await server.app.db.selectFrom("api_keys").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);

describe("development mode requests", () => {
  let server: TestServer;
  let port: string;
  beforeAll(async () => {
    server = await bootServer({ dev: true });
    port = new URL(server.url).port;
  });
  afterAll(() => server.stop());

  it("answers only loopback Host values, with or without the port", async () => {
    for (const host of ["localhost", `localhost:${port}`, "LOCALHOST", "127.0.0.1", `127.0.0.1:${port}`, "[::1]", `[::1]:${port}`]) {
      expect((await raw(server, "GET", "/v1/api-keys", { host })).status, host).toBe(200);
    }
    for (const host of ["attacker.example", `attacker.example:${port}`, "localhost.attacker.example", "127.0.0.1.nip.io", "127.0.0.2", "[::2]", "0.0.0.0", "localhost:80:80"]) {
      const answer = await raw(server, "GET", "/v1/api-keys", { host });
      expect(answer.status, host).toBe(403);
      expect(answer.body.error, host).toMatchObject({ type: "authentication_error", code: "host_not_allowed" });
    }
  });

  it("serves the dashboard only to loopback Host values too, so a rebound page cannot sign in", async () => {
    const form = (host: string) =>
      new Promise<{ status: number; cookie: string | undefined }>((resolve, reject) => {
        const body = "api_key=anything";
        const origin = `http://${host}`;
        const headers = { host, origin, "content-type": "application/x-www-form-urlencoded", "content-length": String(body.length) };
        const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/dashboard/sign-in", headers }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, cookie: res.headers["set-cookie"]?.[0] }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const rebound = await form(`attacker.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(rebound.cookie).toBeUndefined();
    const local = await form(`127.0.0.1:${port}`);
    expect(local.status).toBe(303);
    expect(local.cookie).toContain("HttpOnly");
  });

  it("refuses a write whose body is not declared JSON with 415 unsupported_media_type", async () => {
    const host = `127.0.0.1:${port}`;
    const body = JSON.stringify({ name: "from a form" });
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonp", undefined]) {
      const answer = await raw(server, "POST", "/v1/api-keys", { host, "idempotency-key": `ct-${type}`, ...(type && { "content-type": type }) }, body);
      expect(answer.status, type).toBe(415);
      expect(answer.body.error, type).toMatchObject({ type: "invalid_request_error", code: "unsupported_media_type" });
    }
    const json = await raw(server, "POST", "/v1/api-keys", { host, "idempotency-key": "ct-json", "content-type": "application/json; charset=utf-8" }, body);
    expect(json.status).toBe(201);
    const rotated = await raw(server, "POST", `/v1/api-keys/${json.body.id}/rotate`, { host, "idempotency-key": "ct-empty" });
    expect(rotated.status, "a write without a body needs no Content-Type").toBe(200);
  });

  it("a cross-site form cannot reset the test data: a foreign Origin is refused, an empty form post too, and the reset needs an Idempotency-Key", async () => {
    const host = `127.0.0.1:${port}`;
    const token = await server.request("/v1/tokens", { method: "POST", headers: { "idempotency-key": "dev-reset-tok" }, json: { card: { number: "4242424242424242", exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: "123" } } });
    expect(token.status).toBe(201);
    const sale = await server.request("/v1/payments/sale", { method: "POST", headers: { "idempotency-key": "dev-reset-sale" }, json: { amount: 100, currency: "usd", gateway_token: (await token.json()).token } });
    expect(sale.status).toBe(201);
    const payments = async () => Number((await server.app.db.selectFrom("payments").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);
    const before = await payments();
    const form = "application/x-www-form-urlencoded";
    // The attack as sent: a page's form, empty body, its Origin.
    for (const origin of ["https://evil.example", "null", `http://localhost:${port}`, "http://127.0.0.1:1"]) {
      const answer = await raw(server, "POST", "/v1/test_data/reset", { host, origin, "content-type": form }, "");
      expect(answer.status, origin).toBe(403);
      expect(answer.body.error, origin).toMatchObject({ type: "authentication_error", code: "origin_not_allowed" });
      expect((await raw(server, "GET", "/v1/api-keys", { host, origin })).status, origin).toBe(403);
    }
    // Without an Origin: an empty body declared as a form is refused, and so is a reset without a key.
    expect((await raw(server, "POST", "/v1/test_data/reset", { host, "content-type": form }, "")).body.error.code).toBe("unsupported_media_type");
    expect((await raw(server, "POST", "/v1/test_data/reset", { host, "content-type": "text/plain", "idempotency-key": "dev-reset-0" }, "")).status).toBe(415);
    const keyless = await raw(server, "POST", "/v1/test_data/reset", { host }, "");
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.code).toBe("missing_idempotency_key");
    expect(await payments()).toBe(before);
    // The developer's own tools: curl sends no Origin; the dashboard's page has the server's own.
    const curl = await raw(server, "POST", "/v1/test_data/reset", { host, "idempotency-key": "dev-reset-1" });
    expect(curl.status).toBe(200);
    expect(curl.body.deleted.payments).toBeGreaterThan(0);
    expect(await payments()).toBe(before - curl.body.deleted.payments);
    const sameOrigin = await raw(server, "POST", "/v1/test_data/reset", { host, origin: `http://${host}`, "content-type": "application/json", "idempotency-key": "dev-reset-2" }, "{}");
    expect(sameOrigin.status).toBe(200);
  });

  it("Host: attacker.example with text/plain cannot mint a key", async () => {
    const before = await countKeys(server);
    const body = JSON.stringify({ name: "pwned", mode: "live", role: "admin" });
    const answer = await raw(server, "POST", "/v1/api-keys", { host: "attacker.example", "content-type": "text/plain", "idempotency-key": "rebind-1" }, body);
    expect(answer.status).toBe(403);
    const admin = await raw(server, "POST", "/admin/merchants/x/api-keys", { host: "attacker.example", "content-type": "text/plain", "idempotency-key": "rebind-2" }, body);
    expect(admin.status).toBe(403);
    expect(await countKeys(server)).toBe(before);
  });

  it("acts as a test-mode merchant: never admin, never live", async () => {
    const created = await server.request("/v1/api-keys", { method: "POST", headers: { "idempotency-key": "dev-scopes" }, json: { name: "dev" } });
    expect(created.status).toBe(201);
    const key = await created.json();
    expect(key.key).toMatch(/^sk_test_/);
    expect(key.scopes).not.toContain("admin");
    const adminScope = await server.request("/v1/api-keys", { method: "POST", headers: { "idempotency-key": "dev-admin-scope" }, json: { name: "x", scopes: ["admin"] } });
    expect(adminScope.status).toBe(400);
    expect((await server.request("/admin/merchants")).status).toBe(403);
    const merchant = await server.app.db.selectFrom("merchants").select("short_id").where("name", "=", "Dev Merchant").executeTakeFirstOrThrow();
    for (const body of [{ name: "live", mode: "live" }, { name: "admin", role: "admin" }, { name: "both", mode: "live", role: "admin" }]) {
      const res = await server.request(`/admin/merchants/${merchant.short_id}/api-keys`, { method: "POST", headers: { "idempotency-key": `dev-mint-${body.name}` }, json: body });
      expect(res.status, body.name).toBe(403);
    }
    const live = await server.app.db.selectFrom("api_keys").select("id").where((eb) => eb.or([eb("mode", "=", "live"), eb("role", "=", "admin")])).execute();
    expect(live).toEqual([]);
  });
});

describe("development mode start", () => {
  it("refuses a data dir holding a live key, or a live connector account (exit 1, one line)", async () => {
    const withKey = freshDataDir();
    const withAccount = freshDataDir();
    const seeding = [await bootServer({ dataDir: withKey }), await bootServer({ dataDir: withAccount })] as const;
    const merchant = await createMerchant(seeding[0].app.db, "Live", byOperator());
    await createApiKey(seeding[0].app.db, { merchantId: merchant.id, name: "live", type: "secret", mode: "live", role: "merchant" }, undefined, byOperator());
    const other = await createMerchant(seeding[1].app.db, "Live", byOperator());
    await putSecret(seeding[1].app, "live/nmi", "security-key", byOperator());
    await createConnectorAccount(seeding[1].app, other, { connector_id: "nmi", mode: "live", key_kind: "security_key", label: "main", credential_ref: "secret://live/nmi", is_default: true }, undefined, byOperator());
    for (const server of seeding) await server.close();

    for (const data of [withKey, withAccount]) {
      await expect(bootServer({ dataDir: data, dev: true })).rejects.toThrow(/development mode refuses a data dir that holds live API keys or live connector accounts/);
      const cli = await runCli(["serve", "--dev", "--port", "0", "--data", data]);
      expect(cli.code).toBe(1);
      expect(cli.stderr.trim().split("\n")).toHaveLength(1);
      expect(cli.stderr).toContain("--dev / PAYGATE_DEV_MODE");
    }
  });

  it("replaces a dev key seeded as an admin key by earlier versions", async () => {
    const data = freshDataDir();
    const first = await bootServer({ dataDir: data, dev: true });
    const oldId = (await first.app.db.selectFrom("settings").select("value").where("name", "=", "dev_api_key_id").executeTakeFirstOrThrow()).value;
    await first.app.db.updateTable("api_keys").set({ role: "admin", scopes: JSON.stringify(["admin"]) }).where("id", "=", oldId).execute();
    await first.close();
    const second = await bootServer({ dataDir: data, dev: true });
    try {
      const old = await second.app.db.selectFrom("api_keys").select(["status"]).where("id", "=", oldId).executeTakeFirstOrThrow();
      expect(old.status).toBe("revoked");
      const newId = (await second.app.db.selectFrom("settings").select("value").where("name", "=", "dev_api_key_id").executeTakeFirstOrThrow()).value;
      expect(newId).not.toBe(oldId);
      const key = await second.app.db.selectFrom("api_keys").select(["role", "mode", "status"]).where("id", "=", newId).executeTakeFirstOrThrow();
      expect(key).toEqual({ role: "merchant", mode: "test", status: "active" });
    } finally {
      await second.stop();
    }
  });
});
