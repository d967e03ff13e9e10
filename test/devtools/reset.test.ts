import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { byOperator } from "../../server/audit/audit-actor";
import { putSecret } from "../../server/secrets/secret-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { runCli } from "../support/cli";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { auth, liveSecretKey } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

/** Row counts of everything a reset may or may not touch, for one merchant and mode. */
async function counts(server: TestServer, merchantId: string, mode: "test" | "live") {
  const db = server.app.db;
  const n = async (query: { executeTakeFirstOrThrow(): Promise<{ n: number | string | bigint }> }) => Number((await query.executeTakeFirstOrThrow()).n);
  const events = db.selectFrom("events").select("id").where("merchant_id", "=", merchantId).where("mode", "=", mode);
  const payments = db.selectFrom("payments").select("id").where("merchant_id", "=", merchantId).where("mode", "=", mode);
  const keys = db.selectFrom("api_keys").select("id").where("merchant_id", "=", merchantId).where("mode", "=", mode);
  return {
    payments: await n(db.selectFrom("payments").select((e) => e.fn.countAll().as("n")).where("merchant_id", "=", merchantId).where("mode", "=", mode)),
    refunds: await n(db.selectFrom("refunds").select((e) => e.fn.countAll().as("n")).where("payment_id", "in", payments)),
    card_tokens: await n(db.selectFrom("card_tokens").select((e) => e.fn.countAll().as("n")).where("merchant_id", "=", merchantId).where("mode", "=", mode)),
    events: await n(db.selectFrom("events").select((e) => e.fn.countAll().as("n")).where("merchant_id", "=", merchantId).where("mode", "=", mode)),
    deliveries: await n(db.selectFrom("webhook_deliveries").select((e) => e.fn.countAll().as("n")).where("event_id", "in", events)),
    idempotency: await n(db.selectFrom("idempotency_keys").select((e) => e.fn.countAll().as("n")).where("api_key_id", "in", keys)),
    keys: await n(db.selectFrom("api_keys").select((e) => e.fn.countAll().as("n")).where("merchant_id", "=", merchantId).where("mode", "=", mode)),
    endpoints: await n(db.selectFrom("webhook_endpoints").select((e) => e.fn.countAll().as("n")).where("merchant_id", "=", merchantId).where("mode", "=", mode)),
    accounts: await n(db.selectFrom("connector_accounts").select((e) => e.fn.countAll().as("n")).where("merchant_id", "=", merchantId).where("mode", "=", mode)),
  };
}

/** `METHOD path` of every idempotency record of the merchant's test keys, sorted, once each. */
async function idempotencyRoutes(server: TestServer, merchantId: string): Promise<string[]> {
  const keys = server.app.db.selectFrom("api_keys").select("id").where("merchant_id", "=", merchantId).where("mode", "=", "test");
  const rows = await server.app.db.selectFrom("idempotency_keys").select(["method", "path"]).where("api_key_id", "in", keys).execute();
  return [...new Set(rows.map((r) => `${r.method} ${r.path.replace(/^\/v1\/events\/[^/]+\/replay$/, "/v1/events/:id/replay")}`))].sort();
}

describe("reset of test data", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  let liveKey: string;
  let livePayment: string;

  beforeEach(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ dataDir: freshDataDir(), env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl } });
    shop = await seedSandboxMerchant(server, "Resettable");
    liveKey = await liveSecretKey(server, shop.merchant.id);
    await putSecret(server.app, "reset/stripe", JSON.stringify({ api_key: "sk_live_fake", webhook_secret: "whsec_fake" }), byOperator());
    const account = await server.request(`/admin/merchants/${shop.merchant.id}/connector-accounts`, {
      method: "POST",
      headers: auth(await liveSecretKey(server, shop.merchant.id, "admin")),
      json: { connector_id: "stripe", mode: "live", key_kind: "api_key", label: "main", credential_ref: "secret://reset/stripe" },
    });
    expect(account.status).toBe(201);
    for (const [key, url] of [
      [shop.secret, "http://127.0.0.1:9/hooks"],
      [liveKey, "https://hooks.invalid/live"],
    ] as const) {
      const hook = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(key), json: { url, event_types: ["*"] } });
      expect(hook.status, await hook.clone().text()).toBe(201);
    }
    const test = paymentsClient(server, shop.secret);
    const sold = await (await test.sale({ amount: 700, gateway_token: await test.token() })).json();
    expect((await test.refund({ payment_id: sold.id })).status).toBe(200);
    const live = paymentsClient(server, liveKey);
    const liveSale = await live.sale({ amount: 900, gateway_token: await live.token("5555555555554444") });
    expect(liveSale.status).toBe(201);
    livePayment = (await liveSale.json()).id;
  });
  afterEach(async () => {
    await server.stop();
    await stripe.close();
  });

  async function expectOnlyTestDataGone(liveBefore: Awaited<ReturnType<typeof counts>>, testBefore: Awaited<ReturnType<typeof counts>>) {
    expect(await counts(server, shop.merchant.id, "live")).toEqual(liveBefore);
    expect(await counts(server, shop.merchant.id, "test")).toEqual({
      payments: 0,
      refunds: 0,
      card_tokens: 0,
      events: 0,
      deliveries: 0,
      idempotency: expect.any(Number),
      keys: testBefore.keys,
      endpoints: testBefore.endpoints,
      accounts: testBefore.accounts,
    });
    const live = await paymentsClient(server, liveKey).get(livePayment);
    expect(live.status).toBe(200);
    expect((await live.json()).status).toBe("succeeded");
  }

  it("POST /v1/test_data/reset with a test secret key deletes only that merchant's test data", async () => {
    const testBefore = await counts(server, shop.merchant.id, "test");
    expect(testBefore).toMatchObject({ payments: 1, refunds: 1, card_tokens: 1 });
    expect(testBefore.events).toBeGreaterThan(0);
    expect(testBefore.deliveries).toBeGreaterThan(0);
    expect(testBefore.idempotency).toBeGreaterThan(0);
    const liveBefore = await counts(server, shop.merchant.id, "live");
    expect(liveBefore.payments).toBe(1);

    const res = await server.request("/v1/test_data/reset", { method: "POST", headers: auth(shop.secret) });
    expect(res.status).toBe(200);
    expect((await res.json()).deleted).toMatchObject({ payments: 1, refunds: 1, card_tokens: 1, events: testBefore.events, webhook_deliveries: testBefore.deliveries });
    await expectOnlyTestDataGone(liveBefore, testBefore);
    // The key still works after its idempotency records are gone.
    expect((await paymentsClient(server, shop.secret).list()).status).toBe(200);
  });

  it("refuses a live key with 403 and deletes nothing", async () => {
    const before = { test: await counts(server, shop.merchant.id, "test"), live: await counts(server, shop.merchant.id, "live") };
    const res = await server.request("/v1/test_data/reset", { method: "POST", headers: auth(liveKey) });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("insufficient_permissions");
    expect({ test: await counts(server, shop.merchant.id, "test"), live: await counts(server, shop.merchant.id, "live") }).toEqual(before);
  });

  it("paygate reset --merchant --yes does the same on the store; without --yes and a terminal it refuses", async () => {
    const testBefore = await counts(server, shop.merchant.id, "test");
    const liveBefore = await counts(server, shop.merchant.id, "live");
    const refused = await runCli(["reset", "--merchant", shop.merchant.short_id, "--data", server.dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--yes/);
    expect((await counts(server, shop.merchant.id, "test")).payments).toBe(1);

    const done = await runCli(["reset", "--merchant", shop.merchant.short_id, "--data", server.dataDir, "--yes", "--json"]);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout).deleted).toMatchObject({ payments: 1, refunds: 1, card_tokens: 1 });
    await expectOnlyTestDataGone(liveBefore, testBefore);
  });

  it("needs an Idempotency-Key like every POST: without one, 400 missing_idempotency_key and nothing deleted", async () => {
    const before = await counts(server, shop.merchant.id, "test");
    const bare: Array<Record<string, string>> = [{ authorization: `Bearer ${shop.secret}` }, { authorization: `Bearer ${shop.secret}`, "content-type": "application/x-www-form-urlencoded" }];
    for (const headers of bare) {
      const res = await server.request("/v1/test_data/reset", { method: "POST", headers });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe("missing_idempotency_key");
    }
    expect(await counts(server, shop.merchant.id, "test")).toEqual(before);
  });

  it("keeps its answer: the same key replays it without deleting again, a new key resets again", async () => {
    const headers = auth(shop.secret, "reset-once");
    const first = await server.request("/v1/test_data/reset", { method: "POST", headers });
    expect(first.status).toBe(200);
    const firstBody = await first.json();
    expect(firstBody.deleted.payments).toBe(1);
    const test = paymentsClient(server, shop.secret);
    expect((await test.sale({ amount: 300, gateway_token: await test.token() })).status).toBe(201);

    const replay = await server.request("/v1/test_data/reset", { method: "POST", headers });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.json()).toEqual(firstBody);
    expect((await counts(server, shop.merchant.id, "test")).payments).toBe(1);

    const again = await server.request("/v1/test_data/reset", { method: "POST", headers: auth(shop.secret, "reset-twice") });
    expect(again.status).toBe(200);
    expect((await again.json()).deleted).toMatchObject({ payments: 1, card_tokens: 1 });
    expect((await counts(server, shop.merchant.id, "test")).payments).toBe(0);
  });

  for (const via of ["http", "cli"] as const) {
    it(`${via}: deletes only the idempotency records of the routes whose data it deletes; a key or endpoint creation still replays`, async () => {
      const keyHeaders = auth(shop.secret, "create-key-1");
      const created = await server.request("/v1/api-keys", { method: "POST", headers: keyHeaders, json: { name: "ci" } });
      expect(created.status).toBe(201);
      const key = await created.json();
      const hookHeaders = auth(shop.secret, "create-hook-1");
      const hook = await server.request("/v1/webhook_endpoints", { method: "POST", headers: hookHeaders, json: { url: "http://127.0.0.1:9/second", event_types: ["*"] } });
      expect(hook.status).toBe(201);
      const endpointId = (await hook.json()).id;
      const test = paymentsClient(server, shop.secret);
      const authorized = await (await test.authorize({ amount: 500, capture_method: "manual", gateway_token: await test.token() })).json();
      expect((await test.void({ payment_id: authorized.id })).status).toBe(200);
      const captureMe = await (await test.authorize({ amount: 400, capture_method: "manual", gateway_token: await test.token() })).json();
      expect((await test.capture({ payment_id: captureMe.id })).status).toBe(200);
      const event = (await (await server.request("/v1/events?limit=1", { headers: auth(shop.secret) })).json()).data[0];
      expect((await server.request(`/v1/events/${event.id}/replay`, { method: "POST", headers: auth(shop.secret), json: {} })).status).toBe(200);
      const paymentRoutes = ["POST /v1/events/:id/replay", "POST /v1/payments/authorize", "POST /v1/payments/capture", "POST /v1/payments/refund", "POST /v1/payments/sale", "POST /v1/payments/void", "POST /v1/tokens"];
      const kept = ["POST /v1/api-keys", "POST /v1/webhook_endpoints"];
      expect(await idempotencyRoutes(server, shop.merchant.id)).toEqual([...paymentRoutes, ...kept].sort());
      const keysBefore = (await counts(server, shop.merchant.id, "test")).keys;

      if (via === "http") {
        const res = await server.request("/v1/test_data/reset", { method: "POST", headers: auth(shop.secret) });
        expect(res.status).toBe(200);
        expect((await res.json()).deleted.idempotency_keys).toBeGreaterThanOrEqual(paymentRoutes.length);
      } else {
        const done = await runCli(["reset", "--merchant", shop.merchant.short_id, "--data", server.dataDir, "--yes", "--json"]);
        expect(done.code, done.stderr).toBe(0);
      }
      expect(await idempotencyRoutes(server, shop.merchant.id)).toEqual(via === "http" ? [...kept, "POST /v1/test_data/reset"].sort() : kept);

      const replayedKey = await server.request("/v1/api-keys", { method: "POST", headers: keyHeaders, json: { name: "ci" } });
      expect(replayedKey.status).toBe(201);
      expect(replayedKey.headers.get("idempotent-replayed")).toBe("true");
      expect((await replayedKey.json()).id).toBe(key.id);
      const replayedHook = await server.request("/v1/webhook_endpoints", { method: "POST", headers: hookHeaders, json: { url: "http://127.0.0.1:9/second", event_types: ["*"] } });
      expect(replayedHook.headers.get("idempotent-replayed")).toBe("true");
      expect((await replayedHook.json()).id).toBe(endpointId);
      expect((await counts(server, shop.merchant.id, "test")).keys).toBe(keysBefore);
      expect((await counts(server, shop.merchant.id, "test")).endpoints).toBe(2);
    });
  }
});
