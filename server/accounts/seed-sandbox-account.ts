import { randomAlphanumeric } from "../ids";
import { byOperator } from "../audit/audit-actor";
import type { Merchant } from "../merchants/merchants";
import { putSecret, type SecretDeps } from "../secrets/secret-store";
import { createConnectorAccount } from "./accounts";
import type { ConnectorAccount } from "./connector-account";

/**
 * Gives a merchant the default test account on the built-in simulator, with its own
 * `secret://` credential, so a sandbox can charge at once (dev mode, `paygate sandbox`).
 */
export async function seedSandboxAccount(deps: SecretDeps, merchant: Merchant): Promise<ConnectorAccount> {
  const path = `sandbox/${merchant.short_id}/mock`;
  await putSecret(deps, path, `mock_${randomAlphanumeric(24)}`, byOperator());
  const account = { connector_id: "mock", mode: "test", key_kind: "api_key", label: "sandbox", is_default: true, credential_ref: `secret://${path}` } as const;
  return createConnectorAccount(deps, merchant, account, "test", byOperator());
}
