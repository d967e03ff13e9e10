import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putSecret } from "../../server/secrets/secret-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { bootServer, type TestServer } from "../support/harness";
import { auth, liveSecretKey } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { byOperator } from "../../server/audit/audit-actor";

type Client = ReturnType<typeof paymentsClient>;
interface Side {
  key: string;
  client: Client;
  token: string;
  authorized: string;
  captured: string;
  endpoint: string;
  events: string[];
}

/**
 * One merchant holding a test key and a live key: each mode's tokens, payments,
 * follow-ons, webhook endpoints and events are invisible to the other mode's key.
 * (A different merchant would hide them by merchant id alone, proving nothing about mode.)
 */
describe("test and live data of one merchant never mix", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let test: Side;
  let live: Side;
  let merchantId: string;
  let admins: { test: string; live: string };
  let liveAccount: string;

  async function side(key: string, card: string, endpointBody: Record<string, unknown>): Promise<Side> {
    const client = paymentsClient(server, key);
    const token = await client.token(card);
    const endpoint = await client.post("/v1/webhook_endpoints", endpointBody);
    expect(endpoint.status).toBe(201);
    const authorized = await client.authorize({ amount: 500, gateway_token: token, capture_method: "manual" });
    expect(authorized.status).toBe(201);
    const captured = await client.sale({ amount: 700, gateway_token: token });
    expect(captured.status).toBe(201);
    const events = await (await server.request("/v1/events?limit=100", { headers: auth(key) })).json();
    return {
      key,
      client,
      token,
      authorized: (await authorized.json()).id,
      captured: (await captured.json()).id,
      endpoint: (await endpoint.json()).id,
      events: events.data.map((e: { id: string }) => e.id),
    };
  }

  beforeAll(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl } });
    const m = await seedSandboxMerchant(server, "Two modes");
    merchantId = m.merchant.id;
    const liveKey = await liveSecretKey(server, m.merchant.id);
    admins = { test: m.admin, live: await liveSecretKey(server, m.merchant.id, "admin") };
    await putSecret(server.app, "modes/stripe", JSON.stringify({ api_key: "sk_live_fake", webhook_secret: "whsec_fake" }), byOperator());
    const account = await server.request(`/admin/merchants/${m.merchant.id}/connector-accounts`, {
      method: "POST",
      headers: auth(admins.live),
      json: { connector_id: "stripe", mode: "live", key_kind: "api_key", label: "main", credential_ref: "secret://modes/stripe" },
    });
    expect(account.status).toBe(201);
    liveAccount = (await account.json()).id;
    test = await side(m.secret, "4242424242424242", { url: "http://127.0.0.1:9/test-hooks", event_types: ["*"] });
    // Subscribed to voids only, and no live payment is voided: nothing is ever sent to it.
    live = await side(liveKey, "5555555555554444", { url: "https://hooks.invalid/live", event_types: ["payment.voided"] });
  });
  afterAll(async () => {
    await server.stop();
    await stripe.close();
  });

  const pairs = () =>
    [
      [test, live],
      [live, test],
    ] as const;

  it("has data on both sides", () => {
    for (const s of [test, live]) expect(s.events.length).toBeGreaterThanOrEqual(3);
  });

  it("tokens: the other mode's token is 404 token_not_found", async () => {
    for (const [mine, other] of pairs()) {
      const res = await mine.client.authorize({ amount: 100, gateway_token: other.token });
      expect(res.status).toBe(404);
      expect((await res.json()).error).toMatchObject({ code: "token_not_found", param: "gateway_token" });
    }
  });

  it("payments: the other mode's payment is 404 and absent from the list", async () => {
    for (const [mine, other] of pairs()) {
      const res = await mine.client.get(other.captured);
      expect(res.status).toBe(404);
      expect((await res.json()).error.code).toBe("payment_intent_not_found");
      const list = (await (await mine.client.list("?limit=100")).json()).data.map((p: { id: string }) => p.id);
      expect(list).toEqual(expect.arrayContaining([mine.authorized, mine.captured]));
      expect(list).not.toContain(other.authorized);
      expect(list).not.toContain(other.captured);
    }
  });

  it("follow-ons: capture, void and refund of the other mode's payment are 404", async () => {
    for (const [mine, other] of pairs()) {
      for (const res of [
        await mine.client.capture({ payment_id: other.authorized }),
        await mine.client.void({ payment_id: other.authorized }),
        await mine.client.refund({ payment_id: other.captured }),
      ]) {
        expect(res.status).toBe(404);
        expect((await res.json()).error).toMatchObject({ code: "payment_intent_not_found", param: "payment_id" });
      }
    }
    const untouched = await (await live.client.get(live.authorized)).json();
    expect(untouched.status).toBe("authorized");
  });

  it("webhook endpoints: the other mode's endpoint is 404 everywhere and absent from the list", async () => {
    for (const [mine, other] of pairs()) {
      const path = `/v1/webhook_endpoints/${other.endpoint}`;
      for (const [method, target] of [
        ["GET", path],
        ["PATCH", path],
        ["POST", `${path}/rotate_secret`],
        ["POST", `${path}/test`],
        ["DELETE", path],
      ] as const) {
        const res = await server.request(target, { method, headers: auth(mine.key), ...(method === "GET" || method === "DELETE" ? {} : { json: {} }) });
        expect(res.status, `${method} ${target}`).toBe(404);
        expect((await res.json()).error.code).toBe("webhook_endpoint_not_found");
      }
      const list = await (await server.request("/v1/webhook_endpoints?limit=100", { headers: auth(mine.key) })).json();
      expect(list.data.map((e: { id: string }) => e.id)).toEqual([mine.endpoint]);
    }
  });

  it("events: the other mode's events are 404, not replayable and absent from the list", async () => {
    for (const [mine, other] of pairs()) {
      const list = await (await server.request("/v1/events?limit=100", { headers: auth(mine.key) })).json();
      const ids = list.data.map((e: { id: string }) => e.id);
      for (const id of other.events) {
        expect(ids).not.toContain(id);
        const res = await server.request(`/v1/events/${id}`, { headers: auth(mine.key) });
        expect(res.status).toBe(404);
        expect((await res.json()).error.code).toBe("event_not_found");
        const replay = await server.request(`/v1/events/${id}/replay`, { method: "POST", headers: auth(mine.key), json: {} });
        expect(replay.status).toBe(404);
        expect((await replay.json()).error.code).toBe("event_not_found");
      }
    }
  });

  it("fan-out: a test event is delivered to the test endpoint only, never to the live one", async () => {
    const voided = await test.client.void({ payment_id: (await (await test.client.authorize({ amount: 300, gateway_token: test.token, capture_method: "manual" })).json()).id });
    expect(voided.status).toBe(200);
    const events = await (await server.request("/v1/events?type=payment.voided&limit=1", { headers: auth(test.key) })).json();
    const event = await (await server.request(`/v1/events/${events.data[0].id}`, { headers: auth(test.key) })).json();
    expect(event.deliveries.map((d: { endpoint_id: string }) => d.endpoint_id)).toEqual([test.endpoint]);
  });

  it("audit: each mode's admin key reads its own mode's records and the mode-less ones, never the other mode's", async () => {
    const read = async (key: string, query = "") => {
      const res = await server.request(`/admin/audit?limit=100&merchant=${merchantId}${query}`, { headers: auth(key) });
      expect(res.status).toBe(200);
      return (await res.json()).data as { id: string; action: string; mode: string | null; target: { id: string } }[];
    };
    const seen = { test: await read(admins.test), live: await read(admins.live) };
    for (const mode of ["test", "live"] as const) {
      expect(seen[mode].length).toBeGreaterThan(0);
      expect(seen[mode].every((r) => r.mode === mode || r.mode === null)).toBe(true);
      expect(seen[mode].map((r) => r.action)).toContain("merchant.created");
    }
    const targets = (mode: "test" | "live") => seen[mode].map((r) => r.target.id);
    expect(targets("live")).toEqual(expect.arrayContaining([liveAccount, live.endpoint]));
    expect(targets("test")).toContain(test.endpoint);
    expect(targets("test")).not.toContain(liveAccount);
    expect(targets("test")).not.toContain(live.endpoint);
    expect(targets("live")).not.toContain(test.endpoint);
    // A live record as the cursor is unknown to a test key: its existence does not leak.
    const liveOnly = seen.live.find((r) => r.mode === "live") as { id: string };
    const cursor = await server.request(`/admin/audit?starting_after=${liveOnly.id}`, { headers: auth(admins.test) });
    expect(cursor.status).toBe(400);
    expect((await cursor.json()).error.param).toBe("starting_after");
  });
});
