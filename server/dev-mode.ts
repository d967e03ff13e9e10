import { getSetting, setSetting } from "../store/settings";
import { byOperator } from "./audit/audit-actor";
import { isLoopbackHost, ConfigError, type Config } from "./config";
import { createApiKey } from "./keys/api-keys";
import type { Actor } from "./keys/actor";
import { SCOPES } from "./keys/scopes";
import { createMerchant, getMerchant, type Merchant } from "./merchants/merchants";
import type { SecretDeps } from "./secrets/secret-store";

/**
 * Development mode bypasses authentication, so it must never face a network or run in
 * production (spec, Authentication §7).
 */
export function assertDevModeAllowed(config: Config): void {
  if (config.environment === "production") {
    throw new ConfigError("--dev / PAYGATE_DEV_MODE", "development mode refuses to run in production (PAYGATE_ENV or NODE_ENV is production)");
  }
  if (!isLoopbackHost(config.host)) {
    throw new ConfigError("--dev / PAYGATE_DEV_MODE", `development mode only listens on a loopback address, not ${config.host}`);
  }
}

/** Extra seeding done with the dev merchant (its sandbox connector account). */
export type DevSeeder = (deps: SecretDeps, merchant: Merchant) => Promise<unknown>;

/**
 * The test merchant every dev-mode request acts as, seeded once per data dir, with a
 * test admin key whose plaintext is discarded (it exists to own idempotency records).
 */
export async function devModeActor(deps: SecretDeps, seeders: readonly DevSeeder[]): Promise<Actor> {
  const { db } = deps;
  let merchantId = await getSetting(db, "dev_merchant_id");
  let keyId = await getSetting(db, "dev_api_key_id");
  if (!merchantId || !keyId) {
    const merchant = await createMerchant(db, "Dev Merchant", byOperator());
    const key = await createApiKey(db, { merchantId: merchant.id, name: "dev mode", type: "secret", mode: "test", role: "admin" }, undefined, byOperator());
    for (const seed of seeders) await seed(deps, merchant);
    await setSetting(db, "dev_merchant_id", merchant.id);
    await setSetting(db, "dev_api_key_id", key.id);
    merchantId = merchant.id;
    keyId = key.id;
  }
  const merchant = await getMerchant(db, merchantId);
  return {
    apiKeyId: keyId,
    merchantId: merchant.id,
    merchantShortId: merchant.short_id,
    mode: "test",
    role: "admin",
    keyType: "secret",
    scopes: new Set(SCOPES),
  };
}
