import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../server/server";
import type { Route } from "../../server/http/route";
import { bootServer, type TestServer } from "../support/harness";
import { seedMerchant, type SeededMerchant } from "../support/seed";

/**
 * One concrete request per route: the matrix below runs every route registered in
 * the server against every kind of credential. A route without a sample fails here.
 */
type Sample = (ctx: { own: SeededMerchant }) => { path: string; body?: unknown };
const SAMPLES: Record<string, Sample> = {
  "POST /admin/merchants": () => ({ path: "/admin/merchants", body: { name: "Matrix" } }),
  "GET /admin/merchants": () => ({ path: "/admin/merchants" }),
  "GET /admin/merchants/:merchantId": ({ own }) => ({ path: `/admin/merchants/${own.merchant.id}` }),
  "POST /admin/merchants/:merchantId/api-keys": ({ own }) => ({ path: `/admin/merchants/${own.merchant.id}/api-keys`, body: { name: "m" } }),
  "POST /v1/api-keys": () => ({ path: "/v1/api-keys", body: { name: "matrix" } }),
  "GET /v1/api-keys": () => ({ path: "/v1/api-keys" }),
  "POST /v1/api-keys/:keyId/rotate": ({ own }) => ({ path: `/v1/api-keys/${own.secretId}/rotate` }),
  "DELETE /v1/api-keys/:keyId": ({ own }) => ({ path: `/v1/api-keys/${own.secretId}` }),
  "POST /admin/merchants/:merchantId/connector-accounts": ({ own }) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts`,
    body: { connector_id: "nmi", mode: "live", key_kind: "security_key", label: `l-${Math.random()}`, credential_ref: "env://NMI_KEY" },
  }),
  "GET /admin/merchants/:merchantId/connector-accounts": ({ own }) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts` }),
  "GET /admin/merchants/:merchantId/connector-accounts/:caid": ({ own }) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts/ca_0000000000` }),
  "PATCH /admin/merchants/:merchantId/connector-accounts/:caid": ({ own }) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts/ca_0000000000`,
    body: { label: "x" },
  }),
  "DELETE /admin/merchants/:merchantId/connector-accounts/:caid": ({ own }) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts/ca_0000000000` }),
  "GET /v1/routing": () => ({ path: "/v1/routing" }),
  "PUT /v1/routing": () => ({ path: "/v1/routing", body: { connectors: ["mock"] } }),
};

type Credential = "none" | "malformed" | "unknown" | "revoked" | "rotated" | "publishable" | "secret" | "admin" | "foreign";
const CREDENTIALS: Credential[] = ["none", "malformed", "unknown", "revoked", "rotated", "publishable", "secret", "admin", "foreign"];

/** What the spec says each credential gets on `route` (`allowed` = neither 401 nor 403). */
function expected(route: Route, credential: Credential): { status: number; code: string } | "allowed" | "not_found" {
  switch (credential) {
    case "none":
    case "malformed":
      return { status: 401, code: "authentication_required" };
    case "unknown":
    case "revoked":
    case "rotated":
      return { status: 401, code: "invalid_api_key" };
    case "publishable":
      return route.scope === "tokens:write" ? "allowed" : { status: 403, code: "insufficient_permissions" };
    case "secret":
      return route.scope === "admin" ? { status: 403, code: "insufficient_permissions" } : "allowed";
    case "admin":
      return "allowed";
    case "foreign":
      if (route.scope === "admin") return { status: 403, code: "insufficient_permissions" };
      return route.path.includes(":keyId") ? "not_found" : "allowed";
  }
}

describe("authorization matrix", () => {
  let server: TestServer;
  const routes: Route[] = [];
  beforeAll(async () => {
    server = await bootServer();
    routes.push(...allRoutes(server.app).filter((r) => r.scope !== null));
  });
  afterAll(() => server.stop());

  it("has a sample request for every authenticated route", () => {
    const missing = routes.map((r) => `${r.method} ${r.path}`).filter((k) => !(k in SAMPLES));
    expect(missing).toEqual([]);
  });

  it("answers every route x credential as the spec says", async () => {
    const failures: string[] = [];
    for (const route of routes) {
      for (const credential of CREDENTIALS) {
        // A fresh merchant per cell: rotate and revoke samples consume their key.
        const own = await seedMerchant(server, "Own");
        const foreign = await seedMerchant(server, "Foreign");
        const header = await authorizationFor(credential, own, foreign);
        const sample = (SAMPLES[`${route.method} ${route.path}`] as Sample)({ own });
        const headers: Record<string, string> = { "idempotency-key": `matrix-${Math.random()}` };
        if (header !== undefined) headers.authorization = header;
        const res = await server.request(sample.path, { method: route.method, headers, ...(sample.body !== undefined && { json: sample.body }) });
        const body = res.status === 204 ? {} : await res.json();
        const want = expected(route, credential);
        const cell = `${route.method} ${route.path} x ${credential}: got ${res.status} ${body.error?.code ?? ""}`;
        if (want === "allowed") {
          if (res.status === 401 || res.status === 403) failures.push(cell);
        } else if (want === "not_found") {
          if (res.status !== 404) failures.push(cell);
        } else if (res.status !== want.status || body.error?.code !== want.code) {
          failures.push(`${cell}, want ${want.status} ${want.code}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  async function authorizationFor(credential: Credential, own: SeededMerchant, foreign: SeededMerchant): Promise<string | undefined> {
    const bearer = (key: string) => `Bearer ${key}`;
    switch (credential) {
      case "none":
        return undefined;
      case "malformed":
        return `Basic ${Buffer.from("user:pass").toString("base64")}`;
      case "unknown":
        return bearer(`sk_test_${"A".repeat(32)}`);
      case "revoked": {
        const created = await (await server.request("/v1/api-keys", { method: "POST", headers: { authorization: bearer(own.admin), "idempotency-key": `r-${Math.random()}` }, json: { name: "r" } })).json();
        await server.request(`/v1/api-keys/${created.id}`, { method: "DELETE", headers: { authorization: bearer(own.admin) } });
        return bearer(created.key);
      }
      case "rotated": {
        const created = await (await server.request("/v1/api-keys", { method: "POST", headers: { authorization: bearer(own.admin), "idempotency-key": `o-${Math.random()}` }, json: { name: "o" } })).json();
        await server.request(`/v1/api-keys/${created.id}/rotate`, { method: "POST", headers: { authorization: bearer(own.admin), "idempotency-key": `o2-${Math.random()}` } });
        return bearer(created.key);
      }
      case "publishable":
        return bearer(own.publishable);
      case "secret":
        return bearer(own.secret);
      case "admin":
        return bearer(own.admin);
      case "foreign":
        return bearer(foreign.secret);
    }
  }

  it("rejects malformed bearer values and wrong prefixes as invalid_api_key", async () => {
    for (const value of ["Bearer sk_prod_" + "A".repeat(32), "Bearer not-a-key", "Bearer sk_test_short"]) {
      const res = await server.request("/v1/api-keys", { headers: { authorization: value } });
      expect(res.status).toBe(401);
      expect((await res.json()).error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    }
  });
});
