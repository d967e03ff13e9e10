import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { expectError } from "../support/errors";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { auth } from "../support/seed";

/**
 * Events carry the payment object: a key that may manage webhooks but not read
 * payments must not read payment data through them.
 */
describe("events need payments:read", () => {
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  let eventId: string;
  beforeAll(async () => {
    server = await bootServer();
    shop = await seedSandboxMerchant(server);
    const client = paymentsClient(server, shop.secret);
    expect((await client.sale({ amount: 500, gateway_token: await client.token() })).status).toBe(201);
    const events = await (await server.request("/v1/events", { headers: auth(shop.secret) })).json();
    eventId = events.data[0].id;
  });
  afterAll(() => server.stop());

  const keyWith = async (scopes: string[]) => {
    const res = await server.request("/v1/api-keys", { method: "POST", headers: auth(shop.secret), json: { name: scopes.join(","), scopes } });
    expect(res.status).toBe(201);
    return (await res.json()).key as string;
  };

  it("refuses a webhooks-only key on every route that answers with events", async () => {
    const key = await keyWith(["webhooks:read", "webhooks:write"]);
    await expectError(await server.request("/v1/events", { headers: auth(key) }), 403, "insufficient_permissions");
    await expectError(await server.request(`/v1/events/${eventId}`, { headers: auth(key) }), 403, "insufficient_permissions");
    await expectError(await server.request("/v1/events/stream", { headers: auth(key) }), 403, "insufficient_permissions");
    await expectError(await server.request(`/v1/events/${eventId}/replay`, { method: "POST", headers: auth(key), json: {} }), 403, "insufficient_permissions");
    // Its own business, the endpoints, stays open to it.
    expect((await server.request("/v1/webhook_endpoints", { headers: auth(key) })).status).toBe(200);
  });

  it("lets a key holding both read them", async () => {
    const key = await keyWith(["webhooks:read", "payments:read"]);
    const res = await server.request(`/v1/events/${eventId}`, { headers: auth(key) });
    expect(res.status).toBe(200);
    expect((await res.json()).data.amount).toBe(500);
  });
});
