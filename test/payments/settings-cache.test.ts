import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { byOperator } from "../../server/audit/audit-actor";
import { putSecret } from "../../server/secrets/secret-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { runCli } from "../support/cli";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";

/**
 * A charge reads accounts, routing, the decrypted credential and the webhook endpoints
 * from memory (server/cache/settings-cache.ts). Another process's change must reach
 * the very next charge: each case warms the cache with charges first, changes the
 * setting through the CLI (another process), then charges once more at once.
 */
describe("settings a charge keeps in memory, changed by another process", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let live: SeededMerchant;
  let accountShortId: string;
  const keyOfLastCall = () => stripe.requests.at(-1)?.headers.authorization;

  beforeAll(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl } });
    live = await seedMerchant(server, "Rotating shop", "live");
    await putSecret(server.app, "shop/stripe", JSON.stringify({ api_key: "sk_live_FIRST", webhook_secret: "whsec_first" }), byOperator());
    const account = await server.request(`/admin/merchants/${live.merchant.id}/connector-accounts`, {
      method: "POST",
      headers: auth(live.admin),
      json: { connector_id: "stripe", mode: "live", key_kind: "api_key", label: "main", is_default: true, credential_ref: "secret://shop/stripe" },
    });
    expect(account.status).toBe(201);
    accountShortId = (await account.json()).short_id;
  });
  afterAll(async () => {
    await server.stop();
    await stripe.close();
  });

  it("uses a credential rotated with `paygate secrets put` on the next charge", async () => {
    const client = paymentsClient(server, live.secret);
    const token = await client.token("5555555555554444");
    for (let i = 0; i < 3; i++) {
      expect((await client.sale({ amount: 1000, gateway_token: token })).status).toBe(201);
      expect(keyOfLastCall()).toBe("Bearer sk_live_FIRST");
    }
    const put = await runCli(["secrets", "put", "shop/stripe", "--data", server.dataDir], { input: JSON.stringify({ api_key: "sk_live_SECOND", webhook_secret: "whsec_second" }) });
    expect(put.code, put.stderr).toBe(0);
    expect((await client.sale({ amount: 1000, gateway_token: token })).status).toBe(201);
    expect(keyOfLastCall()).toBe("Bearer sk_live_SECOND");
  });

  it("follows an account moved to another secret with `paygate accounts update` on the next charge", async () => {
    await putSecret(server.app, "shop/stripe-moved", JSON.stringify({ api_key: "sk_live_MOVED", webhook_secret: "whsec_moved" }), byOperator());
    const client = paymentsClient(server, live.secret);
    const token = await client.token("5555555555554444");
    expect((await client.sale({ amount: 1000, gateway_token: token })).status).toBe(201);
    expect(keyOfLastCall()).not.toBe("Bearer sk_live_MOVED");
    const update = await runCli(["accounts", "update", accountShortId, "--merchant", live.merchant.id, "--credential-ref", "secret://shop/stripe-moved", "--data", server.dataDir]);
    expect(update.code, update.stderr).toBe(0);
    expect((await client.sale({ amount: 1000, gateway_token: token })).status).toBe(201);
    expect(keyOfLastCall()).toBe("Bearer sk_live_MOVED");
  });
});

describe("webhook endpoints a sale fans out to, changed by another process", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  const deliveriesOf = async (paymentId: string) =>
    server.app.db
      .selectFrom("webhook_deliveries")
      .innerJoin("events", "events.id", "webhook_deliveries.event_id")
      .select("webhook_deliveries.endpoint_id")
      .where("events.payment_id", "=", paymentId)
      .execute();

  it("writes no delivery without endpoints, and the next sale's deliveries once the CLI adds one", async () => {
    const shop = await seedSandboxMerchant(server);
    const client = paymentsClient(server, shop.secret);
    const token = await client.token();
    let sale;
    for (let i = 0; i < 3; i++) {
      sale = await (await client.sale({ amount: 500, gateway_token: token })).json();
      expect(await deliveriesOf(sale.id)).toEqual([]);
    }
    const created = await runCli(["endpoints", "create", "--merchant", shop.merchant.id, "--url", "http://127.0.0.1:9/hook", "--events", "*", "--data", server.dataDir, "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const endpointId = JSON.parse(created.stdout).id;
    sale = await (await client.sale({ amount: 500, gateway_token: token })).json();
    // A sale's two events (authorized, captured), one delivery each.
    expect(await deliveriesOf(sale.id)).toEqual([{ endpoint_id: endpointId }, { endpoint_id: endpointId }]);
  });
});
