import { z } from "zod";
import type { ConnectorAccountRow } from "../../store/schema";
import type { ConnectorId, Mode } from "../connectors/connector";
import { CONNECTOR_IDS } from "../connectors/registry";
import { timestamp } from "../ids";

/** A connector account as the admin API, the CLI and the resolution rules see it. */
export const connectorAccountSchema = z.object({
  id: z.string(),
  object: z.literal("connector_account"),
  short_id: z.string(),
  merchant_id: z.string(),
  merchant_short_id: z.string(),
  connector_id: z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]]),
  mode: z.enum(["test", "live"]) satisfies z.ZodType<Mode>,
  key_kind: z.string(),
  label: z.string(),
  is_default: z.boolean(),
  credential_ref: z.string().meta({ description: "Where the credential lives (env:NAME, file:…, secret:…), never the credential itself." }),
  is_active: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
}).meta({ id: "ConnectorAccount" });
export type ConnectorAccount = z.infer<typeof connectorAccountSchema>;

export function toConnectorAccount(row: ConnectorAccountRow, merchantShortId: string): ConnectorAccount {
  return {
    id: row.id,
    object: "connector_account",
    short_id: row.short_id,
    merchant_id: row.merchant_id,
    merchant_short_id: merchantShortId,
    connector_id: row.connector_id as ConnectorId,
    mode: row.mode,
    key_kind: row.key_kind,
    label: row.label,
    is_default: row.is_default === 1,
    credential_ref: row.credential_ref,
    is_active: row.is_active === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
