import { createApiKey } from "../../server/keys/api-keys";
import type { Mode } from "../../server/connectors/connector";
import { createMerchant, type Merchant } from "../../server/merchants/merchants";
import type { TestServer } from "./harness";
import { byOperator } from "../../server/audit/audit-actor";

export interface SeededMerchant {
  merchant: Merchant;
  secret: string;
  publishable: string;
  admin: string;
  secretId: string;
}

/** A merchant with a secret, a publishable and an admin key, made through the real services. */
export async function seedMerchant(server: TestServer, name = "Test Merchant", mode: Mode = "test"): Promise<SeededMerchant> {
  const db = server.app.db;
  const merchant = await createMerchant(db, name, byOperator());
  const make = (type: "secret" | "publishable", role: "merchant" | "admin") =>
    createApiKey(db, { merchantId: merchant.id, name: `${type}-${role}`, type, mode, role }, undefined, byOperator());
  const secret = await make("secret", "merchant");
  const publishable = await make("publishable", "merchant");
  const admin = await make("secret", "admin");
  return { merchant, secret: secret.key as string, publishable: publishable.key as string, admin: admin.key as string, secretId: secret.id };
}

let counter = 0;
/** Headers for an authenticated request, with a fresh Idempotency-Key unless given. */
export function auth(key: string, idempotencyKey: string = `idem-${Date.now()}-${++counter}`): Record<string, string> {
  return { authorization: `Bearer ${key}`, "idempotency-key": idempotencyKey };
}

/**
 * A live secret key for `merchantId` (role `admin` for the admin API's live accounts),
 * minted as the operator does (the CLI): no test key, admin included, may mint a live
 * one over the API.
 */
export async function liveSecretKey(server: TestServer, merchantId: string, role: "merchant" | "admin" = "merchant"): Promise<string> {
  const key = await createApiKey(server.app.db, { merchantId, name: `live ${role}`, type: "secret", mode: "live", role }, undefined, byOperator());
  return key.key as string;
}
