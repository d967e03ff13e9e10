import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listConnectorAccounts } from "../../store/connector-accounts";
import { putSecret } from "../../server/secrets/secret-store";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { seedSandboxMerchant } from "../support/payments";
import { byOperator } from "../../server/audit/audit-actor";

describe("the accounts a charge loads", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer();
  });
  afterAll(() => server.stop());

  it("are the merchant's active accounts of the key's mode only", async () => {
    const m = await seedSandboxMerchant(server, "Charge accounts");
    const base = `/admin/merchants/${m.merchant.id}/connector-accounts`;
    await putSecret(server.app, "charge-accounts/stripe", JSON.stringify({ api_key: "sk_test_x", webhook_secret: "whsec_x" }), byOperator());
    const create = async (body: Record<string, unknown>) =>
      (await server.request(base, { method: "POST", headers: auth(m.admin), json: { connector_id: "stripe", key_kind: "api_key", credential_ref: "secret://charge-accounts/stripe", ...body } })).json();
    const testStripe = await create({ mode: "test", label: "t" });
    await create({ mode: "live", label: "l" });
    const deleted = await create({ mode: "test", label: "gone" });
    expect((await server.request(`${base}/${deleted.short_id}`, { method: "DELETE", headers: auth(m.admin) })).status).toBe(204);

    const loaded = await listConnectorAccounts(server.app.db, m.merchant.id, { mode: "test" });
    expect(loaded.map((a) => a.short_id).sort()).toEqual([m.accountShortId, testStripe.short_id].sort());
  });
});
