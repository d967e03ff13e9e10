import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AppContext } from "../app-context";
import { seedSandboxAccount } from "../accounts/seed-sandbox-account";
import { byOperator } from "../audit/audit-actor";
import { createApiKey } from "../keys/api-keys";
import { SCOPES } from "../keys/scopes";
import { hashKey } from "../keys/key-format";
import { findApiKeyByHash } from "../../store/api-keys";
import { issueSignInToken } from "../dashboard/session";
import { createMerchant } from "../merchants/merchants";
import { tokenizeCard } from "../tokens/tokenize";
import { createEndpoint } from "../webhooks/endpoints";

export const SANDBOX_FILE = "sandbox.json";

/**
 * What `paygate sandbox` seeded in a data dir. Kept in `sandbox.json` (mode 0600) so
 * a reused data dir prints the same keys: the only place paygate keeps a key's
 * plaintext, and only test keys of a sandbox.
 */
export interface SandboxInfo {
  merchant: { id: string; short_id: string };
  keys: { secret: string; publishable: string; admin: string };
  connector_account: { id: string; short_id: string };
  /** An approved test card's token, for the ready-to-paste curl. */
  sample_token: string;
  webhook?: { id: string; url: string; secret: string };
  /** Where the sandbox last served, so `paygate listen --data DIR` finds it. */
  base_url?: string;
}

function readSandboxFile(dataDir: string): SandboxInfo | undefined {
  const file = join(dataDir, SANDBOX_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as SandboxInfo) : undefined;
}

function writeSandboxFile(dataDir: string, info: SandboxInfo): void {
  const file = join(dataDir, SANDBOX_FILE);
  writeFileSync(file, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** Seeds the sandbox merchant, its default mock account and three test keys, once per data dir. */
async function seed(app: AppContext): Promise<SandboxInfo> {
  const merchant = await createMerchant(app.db, "Sandbox Merchant", byOperator());
  const account = await seedSandboxAccount(app, merchant);
  const key = (name: string, type: "secret" | "publishable", role: "merchant" | "admin") =>
    createApiKey(app.db, { merchantId: merchant.id, name, type, mode: "test", role }, undefined, byOperator());
  const secret = await key("sandbox secret", "secret", "merchant");
  const publishable = await key("sandbox publishable", "publishable", "merchant");
  const admin = await key("sandbox admin", "secret", "admin");
  const actor = {
    apiKeyId: secret.id,
    merchantId: merchant.id,
    merchantShortId: merchant.short_id,
    mode: "test" as const,
    role: "merchant" as const,
    keyType: "secret" as const,
    scopes: new Set(SCOPES),
  };
  const token = await tokenizeCard(app, actor, { card: { number: "4242424242424242", exp_month: 12, exp_year: new Date().getUTCFullYear() + 5, cvc: "123" } });
  return {
    merchant: { id: merchant.id, short_id: merchant.short_id },
    keys: { secret: secret.key as string, publishable: publishable.key as string, admin: admin.key as string },
    connector_account: { id: account.id, short_id: account.short_id },
    sample_token: token.token,
  };
}

/**
 * The sandbox of `dataDir`: seeded on first use, read back afterwards. With
 * `webhookUrl`, an endpoint for every event type is registered (once per URL).
 */
export async function openSandbox(app: AppContext, webhookUrl?: string): Promise<SandboxInfo> {
  let info = readSandboxFile(app.config.dataDir);
  if (!info) {
    info = await seed(app);
    writeSandboxFile(app.config.dataDir, info);
  }
  if (webhookUrl !== undefined && info.webhook?.url !== webhookUrl) {
    const endpoint = await createEndpoint(app.db, app.cipher, { merchantId: info.merchant.id, mode: "test" }, { url: webhookUrl, event_types: ["*"], description: "paygate sandbox --webhook" }, app.targets, byOperator());
    info = { ...info, webhook: { id: endpoint.id, url: endpoint.url, secret: endpoint.secret as string } };
    writeSandboxFile(app.config.dataDir, info);
  }
  return info;
}

/** Notes where the sandbox serves now (a `--port 0` sandbox moves on every run). */
export function recordSandboxUrl(dataDir: string, info: SandboxInfo, baseUrl: string): void {
  writeSandboxFile(dataDir, { ...info, base_url: baseUrl });
}

/**
 * A one-time dashboard sign-in link for the sandbox's secret key: a short-lived token
 * in the URL, never the key.
 */
export async function sandboxSignInLink(app: AppContext, info: SandboxInfo, baseUrl: string): Promise<string | undefined> {
  const key = await findApiKeyByHash(app.db, hashKey(info.keys.secret));
  if (!key || key.status !== "active") return undefined;
  return `${baseUrl}/dashboard/sign-in/link?token=${await issueSignInToken(app, key.id)}`;
}
