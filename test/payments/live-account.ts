import { expect } from "vitest";
import { putSecret } from "../../server/secrets/secret-store";
import type { TestServer } from "../support/harness";
import { paymentsClient } from "../support/payments";
import { auth, seedMerchant } from "../support/seed";
import { byOperator } from "../../server/audit/audit-actor";

const ACCOUNTS = {
  stripe: { key_kind: "api_key", secret: { api_key: "sk_live_fake", webhook_secret: "whsec_fake" } },
  tsys: { key_kind: "device_credential", secret: { device_id: "88800000282601", transaction_key: "TXKPaymentsTestKey" } },
} as const;

/** A live merchant whose default account on `connector` points at the server's configured fake; returns its client and a live token. */
export async function liveMerchant(server: TestServer, connector: keyof typeof ACCOUNTS) {
  const live = await seedMerchant(server, `Live ${connector} shop`, "live");
  const { key_kind, secret } = ACCOUNTS[connector];
  await putSecret(server.app, `live/${connector}`, JSON.stringify(secret), byOperator());
  const created = await server.request(`/admin/merchants/${live.merchant.id}/connector-accounts`, {
    method: "POST",
    headers: auth(live.admin),
    json: { connector_id: connector, mode: "live", key_kind, label: "main", is_default: true, credential_ref: `secret://live/${connector}` },
  });
  const account = await created.json();
  expect(created.status, JSON.stringify(account)).toBe(201);
  const client = paymentsClient(server, live.secret);
  return { live, account, client, token: await client.token("5555555555554444") };
}
