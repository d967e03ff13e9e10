import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth, liveSecretKey, seedMerchant } from "../support/seed";
import { CARDS, paymentsClient, seedSandboxMerchant } from "../support/payments";
import { putSecret } from "../../server/secrets/secret-store";
import { expectError } from "../support/errors";
import { byOperator } from "../../server/audit/audit-actor";

describe("payments over HTTP (sandbox)", () => {
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  let client: ReturnType<typeof paymentsClient>;
  let approved: string;
  beforeAll(async () => {
    server = await bootServer();
    shop = await seedSandboxMerchant(server);
    client = paymentsClient(server, shop.secret);
    approved = await client.token(CARDS.approved);
  });
  afterAll(() => server.stop());

  const eventsOf = async (paymentId: string) =>
    (await server.app.db.selectFrom("events").select(["type", "payload"]).where("payment_id", "=", paymentId).orderBy("created_at").orderBy("id").execute()).map((e) => ({
      type: e.type,
      status: JSON.parse(e.payload).data.status,
    }));

  it("approves the approved card, with the account fields on the payment", async () => {
    const res = await client.authorize({ amount: 2500, currency: "EUR", gateway_token: approved, capture_method: "manual", metadata: { order: "42" }, description: "Order 42" });
    expect(res.status).toBe(201);
    const payment = await res.json();
    expect(payment).toMatchObject({
      object: "payment",
      merchant_id: shop.merchant.id,
      amount: 2500,
      amount_captured: 0,
      currency: "eur",
      status: "authorized",
      capture_method: "manual",
      connector_id: "mock",
      connector_account_id: shop.accountId,
      connector_account_short_id: shop.accountShortId,
      test_mode: true,
      card: { brand: "visa", last4: "4242" },
      failure_code: null,
      refunds: [],
      metadata: { order: "42" },
      description: "Order 42",
    });
    expect(payment.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await eventsOf(payment.id)).toEqual([{ type: "payment.authorized", status: "authorized" }]);
  });

  it.each(["generic_decline", "insufficient_funds", "expired_card", "incorrect_cvc"] as const)("declines %s with 502 and keeps the failed payment", async (code) => {
    const token = await client.token(CARDS[code]);
    const res = await client.sale({ amount: 1000, gateway_token: token }, { "x-request-id": `decline-${code}` });
    expect(res.status).toBe(502);
    const { error } = await res.json();
    expect(error).toEqual({
      type: "connector_error",
      code: "connector_error",
      connector_code: code,
      message: expect.any(String),
      payment_id: expect.any(String),
      request_id: `decline-${code}`,
    });
    const stored = await (await client.get(error.payment_id)).json();
    expect(stored).toMatchObject({ status: "failed", failure_code: code, amount_captured: 0 });
    expect(await eventsOf(error.payment_id)).toEqual([{ type: "payment.failed", status: "failed" }]);
  });

  it("runs authorize -> capture -> partial refund -> full refund", async () => {
    const payment = await (await client.authorize({ amount: 1000, gateway_token: approved, capture_method: "manual" })).json();
    const captured = await client.capture({ payment_id: payment.id, amount: 800 });
    expect(captured.status).toBe(200);
    expect(await captured.json()).toMatchObject({ status: "succeeded", amount_captured: 800 });
    const partial = await (await client.refund({ payment_id: payment.id, amount: 300, reason: "damaged" })).json();
    expect(partial).toMatchObject({ status: "partially_refunded", amount_refunded: 300, refunds: [{ amount: 300, reason: "damaged" }] });
    expect(partial.refunds[0].id).toMatch(/^re_/);
    const full = await (await client.refund({ payment_id: payment.id })).json();
    expect(full).toMatchObject({ status: "refunded", amount_refunded: 800 });
    expect(full.refunds.map((r: { amount: number }) => r.amount)).toEqual([300, 500]);
    expect(await eventsOf(payment.id)).toEqual([
      { type: "payment.authorized", status: "authorized" },
      { type: "payment.captured", status: "succeeded" },
      { type: "payment.refunded", status: "partially_refunded" },
      { type: "payment.refunded", status: "refunded" },
    ]);
  });

  it("runs authorize -> void", async () => {
    const payment = await (await client.authorize({ amount: 700, gateway_token: approved, capture_method: "manual" })).json();
    const voided = await client.void({ payment_id: payment.id });
    expect(voided.status).toBe(200);
    expect(await voided.json()).toMatchObject({ status: "voided", amount_captured: 0 });
    expect((await eventsOf(payment.id)).map((e) => e.type)).toEqual(["payment.authorized", "payment.voided"]);
  });

  it("runs a sale, and an automatic-capture authorize, straight to succeeded", async () => {
    for (const res of [await client.sale({ amount: 900, gateway_token: approved }), await client.authorize({ amount: 900, gateway_token: approved })]) {
      expect(res.status).toBe(201);
      const payment = await res.json();
      expect(payment).toMatchObject({ status: "succeeded", capture_method: "automatic", amount_captured: 900 });
      expect(await eventsOf(payment.id)).toEqual([
        { type: "payment.authorized", status: "authorized" },
        { type: "payment.captured", status: "succeeded" },
      ]);
    }
    const manualSale = await client.sale({ amount: 900, gateway_token: approved, capture_method: "manual" });
    expect((await manualSale.json()).error).toMatchObject({ code: "parameter_invalid", param: "capture_method" });
  });

  it("answers every illegal transition with 409 invalid_state_transition", async () => {
    const make = {
      authorized: async () => (await (await client.authorize({ amount: 500, gateway_token: approved, capture_method: "manual" })).json()).id,
      succeeded: async () => (await (await client.sale({ amount: 500, gateway_token: approved })).json()).id,
      partially_refunded: async () => {
        const id = (await (await client.sale({ amount: 500, gateway_token: approved })).json()).id;
        await client.refund({ payment_id: id, amount: 100 });
        return id;
      },
      refunded: async () => {
        const id = (await (await client.sale({ amount: 500, gateway_token: approved })).json()).id;
        await client.refund({ payment_id: id });
        return id;
      },
      voided: async () => {
        const id = (await (await client.authorize({ amount: 500, gateway_token: approved, capture_method: "manual" })).json()).id;
        await client.void({ payment_id: id });
        return id;
      },
      failed: async () => (await (await client.sale({ amount: 500, gateway_token: await client.token(CARDS.generic_decline) })).json()).error.payment_id,
    };
    const allowed: Record<string, string[]> = { capture: ["authorized"], void: ["authorized"], refund: ["succeeded", "partially_refunded"] };
    const failures: string[] = [];
    for (const [status, create] of Object.entries(make)) {
      for (const operation of ["capture", "void", "refund"] as const) {
        if (allowed[operation]?.includes(status)) continue;
        const id = await create();
        const before = await (await client.get(id)).json();
        const res = await client[operation]({ payment_id: id });
        const body = await res.json();
        if (res.status !== 409 || body.error?.code !== "invalid_state_transition") failures.push(`${operation} from ${status}: ${res.status} ${body.error?.code}`);
        const after = await (await client.get(id)).json();
        if (after.status !== before.status || after.updated_at !== before.updated_at) failures.push(`${operation} from ${status} changed the payment`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("limits capture and refund amounts", async () => {
    const payment = await (await client.authorize({ amount: 1000, gateway_token: approved, capture_method: "manual" })).json();
    const over = await client.capture({ payment_id: payment.id, amount: 1001 });
    expect(over.status).toBe(400);
    expect((await over.json()).error).toMatchObject({ code: "amount_too_large", param: "amount" });
    await client.capture({ payment_id: payment.id, amount: 600 });
    const refundOver = await client.refund({ payment_id: payment.id, amount: 601 });
    expect((await refundOver.json()).error.code).toBe("amount_too_large");
    expect((await (await client.refund({ payment_id: payment.id, amount: 600 })).json()).status).toBe("refunded");
  });

  it("validates payment bodies", async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ amount: 0, gateway_token: approved }, "parameter_invalid", "amount"],
      [{ amount: 100_000_000, gateway_token: approved }, "parameter_invalid", "amount"],
      [{ amount: 10.5, gateway_token: approved }, "parameter_invalid", "amount"],
      [{ amount: 100, gateway_token: approved, currency: "xyz" }, "parameter_invalid", "currency"],
      [{ amount: 100 }, "parameter_missing", "gateway_token"],
      [{ amount: 100, gateway_token: approved, capture_method: "later" }, "parameter_invalid", "capture_method"],
      [{ amount: 100, gateway_token: approved, tip: 5 }, "parameter_unknown", "tip"],
    ];
    for (const [body, code, param] of cases) {
      const res = await client.authorize(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error).toMatchObject({ code, param });
    }
    const noCurrency = await client.post("/v1/payments/authorize", { amount: 100, gateway_token: approved });
    expect((await noCurrency.json()).error).toMatchObject({ code: "parameter_missing", param: "currency" });
  });

  it("retrieves and lists with pagination and filters", async () => {
    const other = await seedSandboxMerchant(server, "Lister");
    const lister = paymentsClient(server, other.secret);
    const token = await lister.token();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await (await lister.authorize({ amount: 100 + i, gateway_token: token, capture_method: "manual" })).json()).id);
    await lister.sale({ amount: 999, gateway_token: token });
    const first = await (await lister.list("?limit=2")).json();
    expect(first.object).toBe("list");
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const seen = [...first.data];
    let page = first;
    while (page.has_more) {
      page = await (await lister.list(`?limit=2&starting_after=${page.data[page.data.length - 1].id}`)).json();
      seen.push(...page.data);
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen.map((p) => p.id)).size).toBe(6);
    expect(seen.map((p) => p.created_at)).toEqual([...seen.map((p) => p.created_at)].sort().reverse());
    const authorized = await (await lister.list("?status=authorized&limit=100")).json();
    expect(authorized.data.map((p: { id: string }) => p.id).sort()).toEqual([...ids].sort());
    const future = await (await lister.list(`?created_gte=${encodeURIComponent("2999-01-01T00:00:00Z")}`)).json();
    expect(future.data).toEqual([]);
    const bad = await lister.list("?status=lost");
    expect(await expectError(bad, 400, "parameter_invalid")).toMatchObject({ param: "status" });
  });

  it("hides other merchants' and other modes' payments and tokens behind 404", async () => {
    const payment = await (await client.sale({ amount: 100, gateway_token: approved })).json();
    const rival = await seedSandboxMerchant(server, "Rival");
    const rivalClient = paymentsClient(server, rival.secret);
    const res = await rivalClient.get(payment.id);
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: "payment_intent_not_found" });
    const refund = await rivalClient.refund({ payment_id: payment.id });
    expect((await refund.json()).error).toMatchObject({ code: "payment_intent_not_found", param: "payment_id" });
    const foreignToken = await rivalClient.authorize({ amount: 100, gateway_token: approved });
    expect(foreignToken.status).toBe(404);
    expect((await foreignToken.json()).error).toMatchObject({ code: "token_not_found", param: "gateway_token" });
    // Same merchant, live key: the test-mode payment belongs to another environment.
    const live = await server.request("/v1/api-keys", { method: "POST", headers: auth(shop.admin), json: { name: "unused" } });
    expect(live.status).toBe(201);
    // A test admin key cannot mint live keys; the operator (CLI) can.
    const liveClient = paymentsClient(server, await liveSecretKey(server, shop.merchant.id));
    await expectError(await liveClient.get(payment.id), 404, "payment_intent_not_found");
  });

  it("needs a connector account: 400 connector_account_required without one", async () => {
    const bare = await seedMerchant(server, "No accounts");
    const bareClient = paymentsClient(server, bare.secret);
    const res = await bareClient.authorize({ amount: 100, gateway_token: await bareClient.token() });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", code: "connector_account_required", param: "connector_account" });
  });

  it("lists available_accounts in the envelope only for several accounts and no default", async () => {
    const m = await seedMerchant(server, "Undecided");
    const c = paymentsClient(server, m.secret);
    const token = await c.token();
    const required = async () => {
      const res = await c.sale({ amount: 100, gateway_token: token });
      expect(res.status).toBe(400);
      const { error } = await res.json();
      expect(error).toMatchObject({ type: "invalid_request_error", code: "connector_account_required", param: "connector_account" });
      return error;
    };
    expect(await required()).not.toHaveProperty("available_accounts");

    const base = `/admin/merchants/${m.merchant.id}/connector-accounts`;
    await putSecret(server.app, `undecided/${m.merchant.short_id}`, "mock-credential", byOperator());
    const create = async (label: string) =>
      (
        await server.request(base, {
          method: "POST",
          headers: auth(m.admin),
          json: { connector_id: "mock", mode: "test", key_kind: "api_key", label, credential_ref: `secret://undecided/${m.merchant.short_id}` },
        })
      ).json();
    const a = await create("a");
    const b = await create("b");
    const error = await required();
    expect(error.available_accounts).toEqual(
      expect.arrayContaining([
        { short_id: a.short_id, connector_id: "mock", mode: "test", key_kind: "api_key", label: "a", is_default: false },
        { short_id: b.short_id, connector_id: "mock", mode: "test", key_kind: "api_key", label: "b", is_default: false },
      ]),
    );
    expect(error.available_accounts).toHaveLength(2);

    await server.request(`${base}/${b.short_id}`, { method: "PATCH", headers: auth(m.admin), json: { is_default: true } });
    expect((await c.sale({ amount: 100, gateway_token: token })).status).toBe(201);
  });

  it("applies the selector rules to charges and follow-ons", async () => {
    const m = await seedSandboxMerchant(server, "Selectors");
    const c = paymentsClient(server, m.secret);
    const token = await c.token();
    const base = `/admin/merchants/${m.merchant.id}/connector-accounts`;
    const second = await (
      await server.request(base, { method: "POST", headers: auth(m.admin), json: { connector_id: "mock", mode: "test", key_kind: "api_key", label: "second", credential_ref: `secret://sandbox/${m.merchant.short_id}/mock` } })
    ).json();
    const viaHeader = await (await c.authorize({ amount: 100, gateway_token: token, capture_method: "manual" }, { "x-connector-account": second.short_id })).json();
    expect(viaHeader.connector_account_short_id).toBe(second.short_id);
    const viaDefault = await (await c.authorize({ amount: 100, gateway_token: token, capture_method: "manual" })).json();
    expect(viaDefault.connector_account_id).toBe(m.accountId);
    const ambiguous = await c.authorize({ amount: 100, gateway_token: token, connector_account: m.accountShortId }, { "x-connector-account": second.short_id });
    expect((await ambiguous.json()).error.code).toBe("connector_account_ambiguous");

    const override = await c.capture({ payment_id: viaHeader.id, connector_account: m.accountShortId });
    expect(override.status).toBe(400);
    expect((await override.json()).error.code).toBe("connector_account_override_forbidden");
    const inherited = await (await c.capture({ payment_id: viaHeader.id })).json();
    expect(inherited).toMatchObject({ status: "succeeded", connector_account_id: second.id });

    await server.request(`${base}/${m.accountShortId}`, { method: "DELETE", headers: auth(m.admin) });
    const orphan = await c.capture({ payment_id: viaDefault.id });
    expect(orphan.status).toBe(409);
    expect((await orphan.json()).error.code).toBe("conflict");
  });

  it("routes a test key with no routing to mock: a test stripe account needs connector stripe (sandbox rule 3)", async () => {
    const m = await seedSandboxMerchant(server, "Sandbox routing");
    const c = paymentsClient(server, m.secret);
    const token = await c.token();
    await putSecret(server.app, `sandbox-routing/${m.merchant.short_id}`, JSON.stringify({ api_key: "sk_test_x", webhook_secret: "whsec_x" }), byOperator());
    const stripe = await (
      await server.request(`/admin/merchants/${m.merchant.id}/connector-accounts`, {
        method: "POST",
        headers: auth(m.admin),
        json: { connector_id: "stripe", mode: "test", key_kind: "api_key", label: "stripe", credential_ref: `secret://sandbox-routing/${m.merchant.short_id}` },
      })
    ).json();
    const named = await c.sale({ amount: 100, gateway_token: token, connector_account: stripe.short_id });
    expect(named.status).toBe(409);
    expect((await named.json()).error).toMatchObject({ type: "invalid_request_error", code: "connector_account_mismatch", param: "connector_account" });
    const routed = await c.sale({ amount: 100, gateway_token: token, connector: "stripe", connector_account: stripe.short_id });
    expect(routed.status).toBe(201);
    expect(await routed.json()).toMatchObject({ connector_id: "stripe", connector_account_short_id: stripe.short_id });
    const unnamed = await (await c.sale({ amount: 100, gateway_token: token })).json();
    expect(unnamed).toMatchObject({ connector_id: "mock", connector_account_short_id: m.accountShortId });
  });

  it("replays a decline without asking the processor again", async () => {
    const token = await client.token(CARDS.insufficient_funds);
    const first = await client.sale({ amount: 100, gateway_token: token }, { "idempotency-key": "decline-replay" });
    const second = await client.sale({ amount: 100, gateway_token: token }, { "idempotency-key": "decline-replay" });
    expect(second.status).toBe(502);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(await second.text()).toBe(await first.text());
  });
});
