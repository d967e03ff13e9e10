import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../server/events/event";
import { startWebhookReceiver, signatureEntries, verifySignature, type WebhookReceiver } from "../fakes/webhook-receiver";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { createEndpoint, emitEvent } from "./support";
import { expectError } from "../support/errors";

describe("webhook delivery", () => {
  let server: TestServer;
  let m: SeededMerchant;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (status?: number) => {
    const r = await startWebhookReceiver({ status });
    receivers.push(r);
    return r;
  };
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server, "Delivery Merchant");
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await server.stop();
  });

  const get = (key: string, path: string) => server.request(path, { headers: { authorization: `Bearer ${key}` } });

  it("POSTs the stored payload, signed with the endpoint's secret", async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(server, m.secret, { url: `${r.url}?source=paygate`, event_types: ["payment.captured"] });
    const event = await emitEvent(server, m.merchant.id, "payment.captured");
    const [hit] = await r.waitUntil((got) => got.length === 1);
    if (!hit) throw new Error("no webhook");

    expect(hit.path).toBe("/hooks?source=paygate");
    expect(hit.headers["content-type"]).toBe("application/json");
    expect(hit.headers["user-agent"]).toBe("paygate-webhooks/0.1.0");
    expect(hit.headers["x-service-event-id"]).toBe(event.id);
    const stored = await server.app.db.selectFrom("events").select("payload").where("id", "=", event.id).executeTakeFirstOrThrow();
    expect(hit.raw).toBe(stored.payload);

    const header = hit.headers["x-service-signature"] as string;
    expect(header).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/);
    const t = Number(/^t=(\d+)/.exec(header)?.[1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5);
    expect(verifySignature(endpoint.secret, header, hit.raw)).toBe(true);
    expect(verifySignature(endpoint.secret, header, hit.raw.replace('"amount":2500', '"amount":9999'))).toBe(false);
    expect(verifySignature("whsec_not_the_secret", header, hit.raw)).toBe(false);
    expect(verifySignature(endpoint.secret, header, hit.raw, 300, Date.now() + 301_000)).toBe(false);

    const payload = JSON.parse(hit.raw);
    expect(payload).toEqual({
      id: event.id,
      object: "event",
      type: "payment.captured",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      test_mode: true,
      data: expect.objectContaining({ merchant_id: m.merchant.id, amount: 2500, currency: "usd", status: "succeeded", connector_id: "mock", test_mode: true }),
    });
    expect(payload.id).toMatch(/^evt_/);
    expect(payload.data.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("sends each event type only to the endpoints subscribed to it", async () => {
    const merchant = await seedMerchant(server, "Routing Merchant");
    const [captured, refundsAndFailures, all, disabled, otherMerchant] = await Promise.all([receiver(), receiver(), receiver(), receiver(), receiver()]);
    await createEndpoint(server, merchant.secret, { url: captured.url, event_types: ["payment.captured"] });
    await createEndpoint(server, merchant.secret, { url: refundsAndFailures.url, event_types: ["payment.refunded", "payment.failed"] });
    await createEndpoint(server, merchant.secret, { url: all.url, event_types: ["*"] });
    const off = await createEndpoint(server, merchant.secret, { url: disabled.url, event_types: ["*"] });
    await server.request(`/v1/webhook_endpoints/${off.id}`, { method: "PATCH", headers: auth(merchant.secret), json: { status: "disabled" } });
    await createEndpoint(server, m.secret, { url: otherMerchant.url, event_types: ["*"] });
    const live = await seedMerchant(server, "Routing Live", "live");
    const liveEndpoint = await createEndpoint(server, live.secret, { url: "https://hooks.example.com/live", event_types: ["*"] });

    const events = new Map<string, string>();
    for (const type of EVENT_TYPES) events.set((await emitEvent(server, merchant.merchant.id, type)).id, type);
    await all.waitUntil((got) => got.length === 5);
    await refundsAndFailures.waitUntil((got) => got.length === 2);
    await captured.waitUntil((got) => got.length === 1);
    const typesAt = (r: WebhookReceiver) => r.received.map((hit) => events.get(hit.headers["x-service-event-id"] as string)).sort();
    expect(typesAt(all)).toEqual([...EVENT_TYPES].sort());
    expect(typesAt(refundsAndFailures)).toEqual(["payment.failed", "payment.refunded"]);
    expect(typesAt(captured)).toEqual(["payment.captured"]);
    expect(disabled.received).toHaveLength(0);
    expect(otherMerchant.received).toHaveLength(0);
    const liveDeliveries = await server.app.db.selectFrom("webhook_deliveries").selectAll().where("endpoint_id", "=", liveEndpoint.id).execute();
    expect(liveDeliveries).toHaveLength(0);
  });

  it("the test endpoint delivers a signed sample event now and reports the answer", async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(server, m.secret, { url: r.url, event_types: ["payment.refunded"] });
    const test = (body: unknown = {}) => server.request(`/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST", headers: auth(m.secret), json: body });

    const ok = await test();
    expect(ok.status).toBe(200);
    const result = await ok.json();
    expect(result).toMatchObject({ delivered: true, status_code: 200, event_id: expect.stringMatching(/^evt_/), error: null });
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    const hit = r.received.at(-1);
    expect(hit?.headers["x-service-event-id"]).toBe(result.event_id);
    expect(verifySignature(endpoint.secret, hit?.headers["x-service-signature"] as string, hit?.raw ?? "")).toBe(true);
    const sample = JSON.parse(hit?.raw ?? "{}");
    expect(sample).toMatchObject({ id: result.event_id, object: "event", type: "payment.refunded", test_mode: true });
    expect(Object.keys(sample.data)).toEqual(expect.arrayContaining(["id", "merchant_id", "amount", "currency", "status", "connector_id", "test_mode"]));

    const typed = await (await test({ event_type: "payment.voided" })).json();
    expect(JSON.parse(r.received.at(-1)?.raw ?? "{}").type).toBe("payment.voided");
    expect(typed.delivered).toBe(true);

    r.answer(503);
    expect(await (await test()).json()).toMatchObject({ delivered: false, status_code: 503, error: null });
    const bad = await test({ event_type: "payment.exploded" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: "parameter_invalid", param: "event_type" });
  });

  it("the test endpoint reports a receiver that cannot be reached", async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(server, m.secret, { url: r.url, event_types: ["*"] });
    await r.close();
    const res = await server.request(`/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST", headers: auth(m.secret), json: {} });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ delivered: false, status_code: null, error: expect.stringMatching(/^connection failed: .*ECONNREFUSED/) });
  });

  it("signs with both secrets during a rotation's grace period", async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(server, m.secret, { url: r.url, event_types: ["payment.voided"] });
    const rotated = await (await server.request(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { method: "POST", headers: auth(m.secret), json: {} })).json();
    await emitEvent(server, m.merchant.id, "payment.voided");
    const [hit] = await r.waitUntil((got) => got.length === 1);
    const header = hit?.headers["x-service-signature"] as string;
    expect(signatureEntries(header)).toHaveLength(2);
    expect(verifySignature(rotated.secret, header, hit?.raw ?? "")).toBe(true);
    expect(verifySignature(endpoint.secret, header, hit?.raw ?? "")).toBe(true);
  });

  it("signs with the new secret from the first delivery after a rotation", async () => {
    const r = await receiver();
    const endpoint = await createEndpoint(server, m.secret, { url: r.url, event_types: ["payment.voided"] });
    await emitEvent(server, m.merchant.id, "payment.voided");
    await r.waitUntil((got) => got.length === 1);
    const rotated = await (await server.request(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { method: "POST", headers: auth(m.secret), json: {} })).json();
    await emitEvent(server, m.merchant.id, "payment.voided");
    const [first, second] = await r.waitUntil((got) => got.length === 2);
    expect(signatureEntries(first?.headers["x-service-signature"] as string)).toHaveLength(1);
    const header = second?.headers["x-service-signature"] as string;
    expect(verifySignature(rotated.secret, header, second?.raw ?? "")).toBe(true);
  });

  it("a receiver that never answers does not hold up another endpoint", async () => {
    const merchant = await seedMerchant(server, "Hang Merchant");
    const stuck = await receiver();
    stuck.hang();
    const healthy = await receiver();
    await createEndpoint(server, merchant.secret, { url: stuck.url, event_types: ["*"] });
    await createEndpoint(server, merchant.secret, { url: healthy.url, event_types: ["*"] });
    const started = Date.now();
    for (let i = 0; i < 12; i++) await emitEvent(server, merchant.merchant.id, "payment.authorized");
    await healthy.waitUntil((got) => got.length === 12, 3000);
    expect(Date.now() - started).toBeLessThan(3000);
    // The hanging receiver holds at most its per-endpoint share of the senders.
    expect(stuck.received.length).toBe(8);
    stuck.dropHung();
  });

  it("lists events newest first, shows deliveries with their attempts, and replays", async () => {
    const merchant = await seedMerchant(server, "Events Merchant");
    const r = await receiver();
    const endpoint = await createEndpoint(server, merchant.secret, { url: r.url, event_types: ["*"] });
    const first = await emitEvent(server, merchant.merchant.id, "payment.authorized");
    const second = await emitEvent(server, merchant.merchant.id, "payment.captured");
    const third = await emitEvent(server, merchant.merchant.id, "payment.captured");
    await r.waitUntil((got) => got.length === 3);

    const list = await (await get(merchant.secret, "/v1/events")).json();
    expect(list).toMatchObject({ object: "list", has_more: false });
    expect(list.data.map((e: { id: string }) => e.id)).toEqual([third.id, second.id, first.id]);
    const captured = await (await get(merchant.secret, "/v1/events?type=payment.captured&limit=1")).json();
    expect(captured.data.map((e: { id: string }) => e.id)).toEqual([third.id]);
    expect(captured.has_more).toBe(true);
    const next = await (await get(merchant.secret, `/v1/events?type=payment.captured&starting_after=${third.id}`)).json();
    expect(next.data.map((e: { id: string }) => e.id)).toEqual([second.id]);
    expect(await expectError(await get(merchant.secret, "/v1/events?type=payment.exploded"), 400, "parameter_invalid")).toMatchObject({ param: "type" });

    // The sweep may still be writing the last attempt's outcome.
    let detail = await (await get(merchant.secret, `/v1/events/${first.id}`)).json();
    for (let i = 0; i < 50 && detail.deliveries[0]?.status !== "succeeded"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      detail = await (await get(merchant.secret, `/v1/events/${first.id}`)).json();
    }
    expect(detail).toMatchObject({ id: first.id, object: "event", type: "payment.authorized", data: { merchant_id: merchant.merchant.id } });
    expect(detail.deliveries).toEqual([
      {
        id: expect.stringMatching(/^whd_/),
        endpoint_id: endpoint.id,
        status: "succeeded",
        attempts: 1,
        next_attempt_at: null,
        attempts_log: [{ attempted_at: expect.any(String), status_code: 200, duration_ms: expect.any(Number), error: null, response_excerpt: "ok" }],
      },
    ]);

    const replay = await server.request(`/v1/events/${first.id}/replay`, { method: "POST", headers: auth(merchant.secret), json: {} });
    expect(replay.status).toBe(200);
    const replayed = await replay.json();
    expect(replayed.id).toBe(first.id);
    expect(replayed.deliveries[0]).toMatchObject({ endpoint_id: endpoint.id, status: "pending", attempts: 0 });
    await r.waitUntil((got) => got.filter((hit) => hit.headers["x-service-event-id"] === first.id).length === 2);

    for (const key of [m.secret, (await seedMerchant(server, "Events Live", "live")).secret]) {
      for (const [method, path] of [
        ["GET", `/v1/events/${first.id}`],
        ["POST", `/v1/events/${first.id}/replay`],
      ] as const) {
        const res = await server.request(path, { method, headers: auth(key), ...(method === "POST" ? { json: {} } : {}) });
        expect(res.status).toBe(404);
        expect((await res.json()).error.code).toBe("event_not_found");
      }
      const others = await (await get(key, "/v1/events?limit=100")).json();
      expect(others.data.map((e: { id: string }) => e.id)).not.toContain(first.id);
    }
  });

  it("delivers the events of a real payment, in the payment's transaction", async () => {
    const shop = await seedSandboxMerchant(server, "Webhook Shop");
    const r = await receiver();
    const endpoint = await createEndpoint(server, shop.secret, { url: r.url, event_types: ["*"] });
    const client = paymentsClient(server, shop.secret);
    const res = await client.authorize({ amount: 4200, gateway_token: await client.token() });
    expect(res.status).toBe(201);
    const payment = await res.json();
    const hits = await r.waitUntil((got) => got.length === 2);
    const events = hits.map((hit) => JSON.parse(hit.raw)).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(events.map((e) => e.type)).toEqual(["payment.authorized", "payment.captured"]);
    for (const [i, hit] of hits.entries()) expect(verifySignature(endpoint.secret, hit.headers["x-service-signature"] as string, hit.raw), `hit ${i}`).toBe(true);
    expect(events[1].data).toMatchObject({ id: payment.id, merchant_id: shop.merchant.id, amount: 4200, currency: "usd", status: "succeeded", connector_id: "mock", test_mode: true });
  });

  it("never logs a signing secret", async () => {
    const secrets = (await server.app.db.selectFrom("webhook_endpoints").select(["id", "secret_encrypted"]).execute()).map((row) =>
      server.app.cipher.decrypt(row.secret_encrypted, row.id),
    );
    const log = server.readLog();
    expect(secrets.length).toBeGreaterThan(5);
    for (const secret of secrets) expect(log).not.toContain(secret.slice("whsec_".length));
  });
});
