import { findApiKey, updateActiveApiKey } from "../store/api-keys";
import type { Db } from "../store/database";
import { holdsLiveAccess } from "../store/live-data";
import { getSetting, setSetting } from "../store/settings";
import { byOperator } from "./audit/audit-actor";
import { isLoopbackHost, ConfigError, type Config } from "./config";
import { ApiError } from "./errors";
import { isoNow } from "./ids";
import { createApiKey } from "./keys/api-keys";
import type { Actor } from "./keys/actor";
import type { ProductionRule } from "./production-rule";
import { SECRET_KEY_SCOPES } from "./keys/scopes";
import { createMerchant, getMerchant, type Merchant } from "./merchants/merchants";
import type { SecretDeps } from "./secrets/secret-store";

const SETTING = "--dev / PAYGATE_DEV_MODE";

/**
 * Development mode bypasses authentication, so it must never face a network or run in
 * production (spec, Authentication §7).
 */
export function assertDevModeAllowed(config: Config): void {
  if (config.environment === "production") {
    throw new ConfigError(SETTING, "development mode refuses to run in production (PAYGATE_ENV or NODE_ENV is production)");
  }
  if (!isLoopbackHost(config.host)) {
    throw new ConfigError(SETTING, `development mode only listens on a loopback address, not ${config.host}`);
  }
}

/**
 * Anyone who reaches a dev-mode server acts as its merchant, so it must never sit on
 * data that moves real money: no active live key, no active live connector account.
 */
export async function assertNoLiveAccess(db: Db, dataDir: string): Promise<void> {
  if (await holdsLiveAccess(db)) {
    throw new ConfigError(SETTING, `development mode refuses a data dir that holds live API keys or live connector accounts (${dataDir}); use a separate data dir`);
  }
}

/**
 * A database a production server has served stays production (server/production-rule.ts),
 * whatever this process's own environment says: dev mode refuses it as it refuses
 * PAYGATE_ENV=production.
 */
export async function assertNotProductionDatabase(production: ProductionRule, location: string): Promise<void> {
  if (await production.check()) {
    throw new ConfigError(SETTING, `development mode refuses a production database (${location}: a server with PAYGATE_ENV=production served it, which marks it for good); use a separate data dir`);
  }
}

/** `localhost`, `127.0.0.1` or `[::1]`, each with or without a port. */
const LOOPBACK_HOST_HEADER = /^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;
const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

/**
 * Why dev mode refuses a request, or undefined. Without authentication, a web page in
 * the developer's browser is the attacker: the Host check stops DNS rebinding; a
 * browser's `Origin` naming another origin than the request's Host is a page of
 * another site (curl, SDKs and test runners send none, and paygate grants no CORS, so
 * no page elsewhere has any use of the API); and requiring JSON as the declared type
 * of every write that declares one, or has a body, forces a CORS preflight on any
 * cross-site write (an empty form post declares `application/x-www-form-urlencoded`).
 * A cross-site write with neither a body nor a Content-Type cannot send the
 * Idempotency-Key every POST needs.
 */
export function devRequestRefusal(method: string, headers: Headers): ApiError | undefined {
  const hostRefusal = devHostRefusal(headers);
  if (hostRefusal) return hostRefusal;
  const origin = headers.get("origin");
  if (origin !== null && !sameOrigin(origin, headers.get("host") ?? "")) {
    return new ApiError(403, "origin_not_allowed", "Development mode refuses requests sent by a web page of another origin (the Origin header).");
  }
  const hasBody = Number(headers.get("content-length") ?? "0") > 0 || headers.has("transfer-encoding");
  const declared = headers.get("content-type");
  if (method !== "GET" && method !== "HEAD" && (hasBody || declared !== null) && !JSON_MEDIA_TYPE.test(declared ?? "")) {
    return new ApiError(415, "unsupported_media_type", "Development mode requires Content-Type: application/json on writes that have a body or declare a Content-Type.");
  }
  return undefined;
}

/** Whether a browser's Origin (`http://localhost:8080`) names the host and port the request went to. */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && url.host.toLowerCase() === host.toLowerCase();
  } catch {
    return false; // "null" (a sandboxed frame, a file: page) or garbage
  }
}

/**
 * Why dev mode refuses a request's Host, or undefined. Every front door of a dev-mode
 * server (the API, the dashboard) applies it: after DNS rebinding a page's Origin and
 * Host agree, so only a loopback Host tells the developer's own requests apart.
 */
export function devHostRefusal(headers: Headers): ApiError | undefined {
  if (LOOPBACK_HOST_HEADER.test(headers.get("host") ?? "")) return undefined;
  return new ApiError(403, "host_not_allowed", "Development mode only answers requests addressed to localhost, 127.0.0.1 or [::1] (the Host header).");
}

/** Extra seeding done with the dev merchant (its sandbox connector account). */
export type DevSeeder = (deps: SecretDeps, merchant: Merchant) => Promise<unknown>;

/** A test-mode merchant secret key for the dev merchant; its plaintext is discarded. */
async function newDevKey(deps: SecretDeps, merchantId: string): Promise<string> {
  const key = await createApiKey(deps.db, { merchantId, name: "dev mode", type: "secret", mode: "test", role: "merchant" }, undefined, byOperator());
  await setSetting(deps.db, "dev_api_key_id", key.id);
  return key.id;
}

/**
 * The test merchant every dev-mode request acts as, seeded once per data dir, with the
 * scopes of a test merchant secret key (never admin: it cannot mint live or admin
 * keys). Its key exists to own idempotency records. Data dirs seeded when the dev key
 * was an admin key get that key revoked and a merchant key instead.
 */
export async function devModeActor(deps: SecretDeps, seeders: readonly DevSeeder[]): Promise<Actor> {
  const { db } = deps;
  let merchantId = await getSetting(db, "dev_merchant_id");
  let keyId = await getSetting(db, "dev_api_key_id");
  if (!merchantId || !keyId) {
    const merchant = await createMerchant(db, "Dev Merchant", byOperator());
    for (const seed of seeders) await seed(deps, merchant);
    keyId = await newDevKey(deps, merchant.id);
    await setSetting(db, "dev_merchant_id", merchant.id);
    merchantId = merchant.id;
  }
  const key = await findApiKey(db, merchantId, keyId);
  if (!key || key.role !== "merchant" || key.status !== "active") {
    if (key?.status === "active") await updateActiveApiKey(db, key.id, { status: "revoked", revoked_at: isoNow() });
    keyId = await newDevKey(deps, merchantId);
  }
  const merchant = await getMerchant(db, merchantId);
  return {
    apiKeyId: keyId,
    merchantId: merchant.id,
    merchantShortId: merchant.short_id,
    mode: "test",
    role: "merchant",
    keyType: "secret",
    scopes: new Set(SECRET_KEY_SCOPES),
  };
}
