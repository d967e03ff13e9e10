import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putSecret } from "../../server/secrets/secret-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { paymentsClient } from "../support/payments";
import { byOperator } from "../../server/audit/audit-actor";

/** The spec's one PATCH field: `credential_ref` moves the account to a new secret path. */
describe("PATCH credential_ref over HTTP", () => {
  let stripe: StripeFake;
  let server: TestServer;
  let live: SeededMerchant;
  beforeAll(async () => {
    stripe = await startStripeFake();
    server = await bootServer({ env: { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl } });
    live = await seedMerchant(server, "Moving shop", "live");
  });
  afterAll(async () => {
    await server.stop();
    await stripe.close();
  });

  it("answers 200 with the moved record, and the next charge uses the new secret", async () => {
    await putSecret(server.app, "shop/stripe-old", JSON.stringify({ api_key: "sk_live_OLDKEY", webhook_secret: "whsec_old" }), byOperator());
    await putSecret(server.app, "shop/stripe-new", JSON.stringify({ api_key: "sk_live_NEWKEY", webhook_secret: "whsec_new" }), byOperator());
    const base = `/admin/merchants/${live.merchant.id}/connector-accounts`;
    const account = await (
      await server.request(base, {
        method: "POST",
        headers: auth(live.admin),
        json: { connector_id: "stripe", mode: "live", key_kind: "api_key", label: "main", is_default: true, credential_ref: "secret://shop/stripe-old" },
      })
    ).json();
    const client = paymentsClient(server, live.secret);
    const token = await client.token("5555555555554444");
    const keyOfLastCall = () => stripe.requests.at(-1)?.headers.authorization;

    expect((await client.sale({ amount: 1000, gateway_token: token })).status).toBe(201);
    expect(keyOfLastCall()).toBe("Bearer sk_live_OLDKEY");

    const patch = (body: unknown) => server.request(`${base}/${account.short_id}`, { method: "PATCH", headers: auth(live.admin), json: body });
    const missing = await patch({ credential_ref: "secret://shop/nowhere" });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ code: "parameter_invalid", param: "credential_ref" });

    const moved = await patch({ credential_ref: "secret://shop/stripe-new" });
    expect(moved.status).toBe(200);
    const record = await moved.json();
    expect(record).toMatchObject({ id: account.id, short_id: account.short_id, credential_ref: "secret://shop/stripe-new", label: "main", is_default: true, is_active: true });
    expect(JSON.stringify(record)).not.toContain("NEWKEY");
    const fetched = await (await server.request(`${base}/${account.short_id}`, { headers: auth(live.admin) })).json();
    expect(fetched.credential_ref).toBe("secret://shop/stripe-new");

    expect((await client.sale({ amount: 1000, gateway_token: token })).status).toBe(201);
    expect(keyOfLastCall()).toBe("Bearer sk_live_NEWKEY");
  });
});
