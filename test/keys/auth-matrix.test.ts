import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../server/server";
import type { Route } from "../../server/http/route";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { paymentsClient } from "../support/payments";
import { seedSandboxAccount } from "../../server/accounts/seed-sandbox-account";
import { getMerchant } from "../../server/merchants/merchants";

/**
 * One concrete request per route: the matrix below runs every route registered in
 * the server against every kind of credential. A route without a sample fails here.
 * `owned`: the request names one of the owner's resources, so a foreign key gets 404.
 */
interface SampleRequest {
  path: string;
  body?: unknown;
  owned?: boolean;
}
type Sample = (own: Owner) => Promise<SampleRequest> | SampleRequest;
interface Owner extends SeededMerchant {
  server: TestServer;
}

async function ownPayment(own: Owner, manual = true): Promise<string> {
  await seedSandboxAccount(own.server.app, await getMerchant(own.server.app.db, own.merchant.id)).catch(() => undefined);
  const client = paymentsClient(own.server, own.admin);
  const res = await client.authorize({ amount: 100, gateway_token: await client.token(), ...(manual && { capture_method: "manual" }) });
  return (await res.json()).id;
}

async function ownEndpoint(own: Owner): Promise<string> {
  const res = await own.server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(own.admin), json: { url: "http://127.0.0.1:9/hook", event_types: ["*"] } });
  return (await res.json()).id;
}

async function ownEvent(own: Owner): Promise<string> {
  const paymentId = await ownPayment(own);
  const row = await own.server.app.db.selectFrom("events").select("id").where("payment_id", "=", paymentId).executeTakeFirstOrThrow();
  return row.id;
}

const SAMPLES: Record<string, Sample> = {
  "POST /admin/merchants": () => ({ path: "/admin/merchants", body: { name: "Matrix" } }),
  "GET /admin/merchants": () => ({ path: "/admin/merchants" }),
  "GET /admin/merchants/:merchantId": (own) => ({ path: `/admin/merchants/${own.merchant.id}` }),
  "POST /admin/merchants/:merchantId/api-keys": (own) => ({ path: `/admin/merchants/${own.merchant.id}/api-keys`, body: { name: "m" } }),
  "POST /v1/api-keys": () => ({ path: "/v1/api-keys", body: { name: "matrix" } }),
  "GET /v1/api-keys": () => ({ path: "/v1/api-keys" }),
  "POST /v1/api-keys/:keyId/rotate": (own) => ({ path: `/v1/api-keys/${own.secretId}/rotate`, owned: true }),
  "DELETE /v1/api-keys/:keyId": (own) => ({ path: `/v1/api-keys/${own.secretId}`, owned: true }),
  "POST /admin/merchants/:merchantId/connector-accounts": (own) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts`,
    body: { connector_id: "nmi", mode: "live", key_kind: "security_key", label: `l-${Math.random()}`, credential_ref: "env://NMI_KEY" },
  }),
  "GET /admin/merchants/:merchantId/connector-accounts": (own) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts` }),
  "GET /admin/merchants/:merchantId/connector-accounts/:caid": (own) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts/ca_0000000000` }),
  "PATCH /admin/merchants/:merchantId/connector-accounts/:caid": (own) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts/ca_0000000000`,
    body: { label: "x" },
  }),
  "DELETE /admin/merchants/:merchantId/connector-accounts/:caid": (own) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts/ca_0000000000` }),
  "GET /v1/routing": () => ({ path: "/v1/routing" }),
  "PUT /v1/routing": () => ({ path: "/v1/routing", body: { connectors: ["mock"] } }),
  "POST /v1/tokens": () => ({ path: "/v1/tokens", body: { card: { number: "4242424242424242", exp_month: 12, exp_year: 2040, cvc: "123" } } }),
  "POST /v1/payments/authorize": () => ({ path: "/v1/payments/authorize", body: { amount: 100, currency: "usd", gateway_token: "tok_test_unknown" } }),
  "POST /v1/payments/sale": () => ({ path: "/v1/payments/sale", body: { amount: 100, currency: "usd", gateway_token: "tok_test_unknown" } }),
  "POST /v1/payments/capture": async (own) => ({ path: "/v1/payments/capture", body: { payment_id: await ownPayment(own) }, owned: true }),
  "POST /v1/payments/refund": async (own) => ({ path: "/v1/payments/refund", body: { payment_id: await ownPayment(own, false) }, owned: true }),
  "POST /v1/payments/void": async (own) => ({ path: "/v1/payments/void", body: { payment_id: await ownPayment(own) }, owned: true }),
  "GET /v1/payments/:id": async (own) => ({ path: `/v1/payments/${await ownPayment(own)}`, owned: true }),
  "GET /v1/payments": () => ({ path: "/v1/payments" }),
  "POST /v1/webhook_endpoints": () => ({ path: "/v1/webhook_endpoints", body: { url: "http://127.0.0.1:9/hook", event_types: ["*"] } }),
  "GET /v1/webhook_endpoints": () => ({ path: "/v1/webhook_endpoints" }),
  "GET /v1/webhook_endpoints/:id": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}`, owned: true }),
  "PATCH /v1/webhook_endpoints/:id": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}`, body: { description: "x" }, owned: true }),
  "DELETE /v1/webhook_endpoints/:id": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}`, owned: true }),
  "POST /v1/webhook_endpoints/:id/rotate_secret": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}/rotate_secret`, owned: true }),
  "POST /v1/webhook_endpoints/:id/test": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}/test`, owned: true }),
  "GET /v1/events": () => ({ path: "/v1/events" }),
  "GET /v1/events/:id": async (own) => ({ path: `/v1/events/${await ownEvent(own)}`, owned: true }),
  "POST /v1/events/:id/replay": async (own) => ({ path: `/v1/events/${await ownEvent(own)}/replay`, owned: true }),
};

type Credential = "none" | "malformed" | "unknown" | "revoked" | "rotated" | "publishable" | "secret" | "admin" | "foreign";
const CREDENTIALS: Credential[] = ["none", "malformed", "unknown", "revoked", "rotated", "publishable", "secret", "admin", "foreign"];

/** What the spec says each credential gets on `route` (`allowed` = neither 401 nor 403). */
function expected(route: Route, credential: Credential, sample: SampleRequest): { status: number; code: string } | "allowed" | "not_found" {
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
      return sample.owned ? "not_found" : "allowed";
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
        const own = { ...(await seedMerchant(server, "Own")), server };
        const foreign = await seedMerchant(server, "Foreign");
        const header = await authorizationFor(credential, own, foreign);
        const sample = await (SAMPLES[`${route.method} ${route.path}`] as Sample)(own);
        const headers: Record<string, string> = { "idempotency-key": `matrix-${Math.random()}` };
        if (header !== undefined) headers.authorization = header;
        const res = await server.request(sample.path, { method: route.method, headers, ...(sample.body !== undefined && { json: sample.body }) });
        const body = res.status === 204 ? {} : await res.json();
        const want = expected(route, credential, sample);
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
