import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../server/server";
import type { Route } from "../../server/http/route";
import { bootServer, type TestResponse, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { paymentsClient } from "../support/payments";
import { seedSandboxAccount } from "../../server/accounts/seed-sandbox-account";
import { getMerchant } from "../../server/merchants/merchants";

/**
 * One concrete request per route: the matrix below runs every route registered in
 * the server against every kind of credential. A route without a sample fails here.
 * `ok`: the exact answer of a key allowed to make the request (a success, or the
 * business answer the sample provokes). `owned`: the request names one of the owner's
 * resources, so another merchant's key gets this 404 code.
 */
interface SampleRequest {
  path: string;
  body?: unknown;
  ok: Answer;
  owned?: string;
}
interface Answer {
  status: number;
  code?: string;
}
type Sample = (own: Owner) => Promise<SampleRequest> | SampleRequest;
interface Owner extends SeededMerchant {
  server: TestServer;
}

/** A setup request that must succeed: a broken sample fails loudly, never becomes `/…/undefined`. */
async function setup(res: TestResponse, status: number, what: string): Promise<any> {
  const body = res.status === 204 ? {} : await res.json();
  if (res.status !== status) throw new Error(`sample setup (${what}) answered ${res.status} ${JSON.stringify(body)}, want ${status}`);
  return body;
}

async function ownPayment(own: Owner, manual = true): Promise<string> {
  await seedSandboxAccount(own.server.app, await getMerchant(own.server.app.db, own.merchant.id));
  const client = paymentsClient(own.server, own.admin);
  const res = await client.authorize({ amount: 100, gateway_token: await client.token(), ...(manual && { capture_method: "manual" }) });
  return (await setup(res, 201, "authorize")).id;
}

async function ownEndpoint(own: Owner): Promise<string> {
  const res = await own.server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(own.admin), json: { url: "http://127.0.0.1:9/hook", event_types: ["*"] } });
  return (await setup(res, 201, "webhook endpoint")).id;
}

async function ownEvent(own: Owner): Promise<string> {
  const paymentId = await ownPayment(own);
  const row = await own.server.app.db.selectFrom("events").select("id").where("payment_id", "=", paymentId).executeTakeFirstOrThrow();
  return row.id;
}

async function ownAccount(own: Owner): Promise<string> {
  const res = await own.server.request(`/admin/merchants/${own.merchant.id}/connector-accounts`, {
    method: "POST",
    headers: auth(own.admin),
    json: { connector_id: "mock", mode: "test", key_kind: "api_key", label: "matrix", credential_ref: "env://MOCK_KEY" },
  });
  return (await setup(res, 201, "connector account")).short_id;
}

const OK = { status: 200 };
const CREATED = { status: 201 };
const SAMPLES: Record<string, Sample> = {
  "POST /admin/merchants": () => ({ path: "/admin/merchants", body: { name: "Matrix" }, ok: CREATED }),
  "GET /admin/merchants": () => ({ path: "/admin/merchants", ok: OK }),
  "GET /admin/merchants/:merchantId": (own) => ({ path: `/admin/merchants/${own.merchant.id}`, ok: OK }),
  "POST /admin/merchants/:merchantId/api-keys": (own) => ({ path: `/admin/merchants/${own.merchant.id}/api-keys`, body: { name: "m" }, ok: CREATED }),
  "POST /v1/api-keys": () => ({ path: "/v1/api-keys", body: { name: "matrix" }, ok: CREATED }),
  "GET /v1/api-keys": () => ({ path: "/v1/api-keys", ok: OK }),
  "POST /v1/api-keys/:keyId/rotate": (own) => ({ path: `/v1/api-keys/${own.secretId}/rotate`, ok: OK, owned: "api_key_not_found" }),
  "DELETE /v1/api-keys/:keyId": (own) => ({ path: `/v1/api-keys/${own.secretId}`, ok: OK, owned: "api_key_not_found" }),
  "POST /admin/merchants/:merchantId/connector-accounts": (own) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts`,
    body: { connector_id: "nmi", mode: "test", key_kind: "security_key", label: "nmi", credential_ref: "env://NMI_KEY" },
    ok: CREATED,
  }),
  "GET /admin/merchants/:merchantId/connector-accounts": (own) => ({ path: `/admin/merchants/${own.merchant.id}/connector-accounts`, ok: OK }),
  "GET /admin/merchants/:merchantId/connector-accounts/:caid": async (own) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts/${await ownAccount(own)}`,
    ok: OK,
  }),
  "PATCH /admin/merchants/:merchantId/connector-accounts/:caid": async (own) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts/${await ownAccount(own)}`,
    body: { label: "x" },
    ok: OK,
  }),
  "DELETE /admin/merchants/:merchantId/connector-accounts/:caid": async (own) => ({
    path: `/admin/merchants/${own.merchant.id}/connector-accounts/${await ownAccount(own)}`,
    ok: { status: 204 },
  }),
  "GET /v1/routing": () => ({ path: "/v1/routing", ok: OK }),
  "PUT /v1/routing": () => ({ path: "/v1/routing", body: { connectors: ["mock"] }, ok: OK }),
  "POST /v1/tokens": () => ({
    path: "/v1/tokens",
    body: { card: { number: "4242424242424242", exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: "123" } },
    ok: CREATED,
  }),
  "POST /v1/payments/authorize": () => ({
    path: "/v1/payments/authorize",
    body: { amount: 100, currency: "usd", gateway_token: "tok_test_unknown" },
    ok: { status: 404, code: "token_not_found" },
  }),
  "POST /v1/payments/sale": () => ({
    path: "/v1/payments/sale",
    body: { amount: 100, currency: "usd", gateway_token: "tok_test_unknown" },
    ok: { status: 404, code: "token_not_found" },
  }),
  "POST /v1/payments/capture": async (own) => ({ path: "/v1/payments/capture", body: { payment_id: await ownPayment(own) }, ok: OK, owned: "payment_intent_not_found" }),
  "POST /v1/payments/refund": async (own) => ({ path: "/v1/payments/refund", body: { payment_id: await ownPayment(own, false) }, ok: OK, owned: "payment_intent_not_found" }),
  "POST /v1/payments/void": async (own) => ({ path: "/v1/payments/void", body: { payment_id: await ownPayment(own) }, ok: OK, owned: "payment_intent_not_found" }),
  "GET /v1/payments/:id": async (own) => ({ path: `/v1/payments/${await ownPayment(own)}`, ok: OK, owned: "payment_intent_not_found" }),
  "GET /v1/payments": () => ({ path: "/v1/payments", ok: OK }),
  "POST /v1/webhook_endpoints": () => ({ path: "/v1/webhook_endpoints", body: { url: "http://127.0.0.1:9/hook", event_types: ["*"] }, ok: CREATED }),
  "GET /v1/webhook_endpoints": () => ({ path: "/v1/webhook_endpoints", ok: OK }),
  "GET /v1/webhook_endpoints/:id": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}`, ok: OK, owned: "webhook_endpoint_not_found" }),
  "PATCH /v1/webhook_endpoints/:id": async (own) => ({
    path: `/v1/webhook_endpoints/${await ownEndpoint(own)}`,
    body: { description: "x" },
    ok: OK,
    owned: "webhook_endpoint_not_found",
  }),
  "DELETE /v1/webhook_endpoints/:id": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}`, ok: OK, owned: "webhook_endpoint_not_found" }),
  "POST /v1/webhook_endpoints/:id/rotate_secret": async (own) => ({
    path: `/v1/webhook_endpoints/${await ownEndpoint(own)}/rotate_secret`,
    ok: OK,
    owned: "webhook_endpoint_not_found",
  }),
  "POST /v1/webhook_endpoints/:id/test": async (own) => ({ path: `/v1/webhook_endpoints/${await ownEndpoint(own)}/test`, ok: OK, owned: "webhook_endpoint_not_found" }),
  "GET /v1/events": () => ({ path: "/v1/events", ok: OK }),
  "GET /v1/events/:id": async (own) => ({ path: `/v1/events/${await ownEvent(own)}`, ok: OK, owned: "event_not_found" }),
  "POST /v1/events/:id/replay": async (own) => ({ path: `/v1/events/${await ownEvent(own)}/replay`, ok: OK, owned: "event_not_found" }),
  // An allowed key's stream never ends; an invalid filter makes its answer a prompt 400.
  "GET /v1/events/stream": () => ({ path: "/v1/events/stream?types=payment.nope", ok: { status: 400, code: "parameter_invalid" } }),
  "POST /v1/test_data/reset": () => ({ path: "/v1/test_data/reset", ok: OK }),
  "GET /admin/audit": () => ({ path: "/admin/audit", ok: OK }),
};

type Credential = "none" | "malformed" | "unknown" | "revoked" | "rotated" | "publishable" | "secret" | "admin" | "foreign";
const CREDENTIALS: Credential[] = ["none", "malformed", "unknown", "revoked", "rotated", "publishable", "secret", "admin", "foreign"];

const FORBIDDEN: Answer = { status: 403, code: "insufficient_permissions" };

/** What the spec says each credential gets on `route`. */
function expected(route: Route, credential: Credential, sample: SampleRequest): Answer {
  switch (credential) {
    case "none":
    case "malformed":
      return { status: 401, code: "authentication_required" };
    case "unknown":
    case "revoked":
    case "rotated":
      return { status: 401, code: "invalid_api_key" };
    case "publishable":
      return route.scope === "tokens:write" ? sample.ok : FORBIDDEN;
    case "secret":
      return route.scope === "admin" ? FORBIDDEN : sample.ok;
    case "admin":
      return sample.ok;
    case "foreign":
      if (route.scope === "admin") return FORBIDDEN;
      return sample.owned === undefined ? sample.ok : { status: 404, code: sample.owned };
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

  it.each(Object.keys(SAMPLES))("answers %s for every credential as the spec says", async (name) => {
    const route = routes.find((r) => `${r.method} ${r.path}` === name);
    if (!route) throw new Error(`no authenticated route ${name}`);
    const failures: string[] = [];
    for (const credential of CREDENTIALS) {
      // A fresh merchant per cell: rotate and revoke samples consume their key.
      const own = { ...(await seedMerchant(server, "Own")), server };
      const foreign = await seedMerchant(server, "Foreign");
      const header = await authorizationFor(credential, own, foreign);
      const sample = await (SAMPLES[name] as Sample)(own);
      const headers: Record<string, string> = { "idempotency-key": `matrix-${Math.random()}` };
      if (header !== undefined) headers.authorization = header;
      const res = await server.request(sample.path, { method: route.method, headers, ...(sample.body !== undefined && { json: sample.body }) });
      const body = res.status === 204 ? {} : await res.json();
      const want = expected(route, credential, sample);
      if (res.status !== want.status || body.error?.code !== want.code) {
        failures.push(`${route.method} ${sample.path} x ${credential}: got ${res.status} ${body.error?.code ?? ""}, want ${want.status} ${want.code ?? ""}`);
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
        const created = await setup(await server.request("/v1/api-keys", { method: "POST", headers: auth(own.admin), json: { name: "r" } }), 201, "key to revoke");
        await setup(await server.request(`/v1/api-keys/${created.id}`, { method: "DELETE", headers: auth(own.admin) }), 200, "revoke");
        return bearer(created.key);
      }
      case "rotated": {
        const created = await setup(await server.request("/v1/api-keys", { method: "POST", headers: auth(own.admin), json: { name: "o" } }), 201, "key to rotate");
        await setup(await server.request(`/v1/api-keys/${created.id}/rotate`, { method: "POST", headers: auth(own.admin) }), 200, "rotate");
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
