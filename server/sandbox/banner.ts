import { TEST_CARDS } from "../connectors/mock/test-cards";
import type { SandboxInfo } from "./sandbox";

/** The one JSON line `paygate sandbox --json` prints first, for scripts and CI. */
export function sandboxJson(info: SandboxInfo, baseUrl: string, dataDir: string): string {
  return JSON.stringify({
    base_url: baseUrl,
    merchant: info.merchant,
    keys: info.keys,
    connector_account: info.connector_account,
    data_dir: dataDir,
    ...(info.webhook && { webhook: info.webhook }),
  });
}

/** The friendly summary a developer reads before pasting the curl line. */
export function sandboxBanner(info: SandboxInfo, baseUrl: string, dataDir: string, temporary: boolean, dashboardLink?: string): string {
  const cards = TEST_CARDS.map((c) => `    ${c.number}  ${c.outcome}`).join("\n");
  const sale = JSON.stringify({ amount: 1000, currency: "usd", gateway_token: info.sample_token });
  const lines = [
    `paygate sandbox is running at ${baseUrl}`,
    "",
    `  merchant            ${info.merchant.short_id} (${info.merchant.id})`,
    `  connector account   ${info.connector_account.short_id} (mock, test, default)`,
    `  secret key          ${info.keys.secret}`,
    `  publishable key     ${info.keys.publishable}`,
    `  admin key           ${info.keys.admin}`,
    `  data                ${dataDir}${temporary ? " (temporary: removed when you stop the sandbox)" : ""}`,
    ...(info.webhook ? [`  webhook             ${info.webhook.url}`, `  webhook secret      ${info.webhook.secret}`] : []),
    `  dashboard           ${baseUrl}/dashboard`,
    ...(dashboardLink ? [`  dashboard sign-in   ${dashboardLink}  (one use, valid 10 minutes)`] : []),
    "",
    "  Test cards (any future expiry, any CVC, any 5-digit ZIP):",
    cards,
    "",
    "  Take a payment now (a token for 4242… is ready):",
    `    curl -s ${baseUrl}/v1/payments/sale -H "Authorization: Bearer ${info.keys.secret}" -H "Idempotency-Key: $(date +%s%N)" -H "Content-Type: application/json" -d '${sale}'`,
    "",
    "  Tokenize a card:",
    `    curl -s ${baseUrl}/v1/tokens -H "Authorization: Bearer ${info.keys.publishable}" -H "Idempotency-Key: $(date +%s%N)" -H "Content-Type: application/json" -d '{"card":{"number":"4000000000009995","exp_month":12,"exp_year":2030,"cvc":"123"}}'`,
    "",
    "  Press Ctrl-C to stop.",
    "",
  ];
  return lines.join("\n");
}
