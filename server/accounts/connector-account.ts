import type { ConnectorAccountRow } from "../../store/schema";
import type { ConnectorId, Mode } from "../connectors/connector";

/** A connector account as the admin API, the CLI and the resolution rules see it. */
export interface ConnectorAccount {
  id: string;
  object: "connector_account";
  short_id: string;
  merchant_id: string;
  merchant_short_id: string;
  connector_id: ConnectorId;
  mode: Mode;
  key_kind: string;
  label: string;
  is_default: boolean;
  credential_ref: string;
  is_active: boolean;
  created_at: string;
  updated_at: string;
}

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
