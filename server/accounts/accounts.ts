import {
  findConnectorAccount,
  insertConnectorAccount,
  isDefaultConflict,
  isLabelConflict,
  listConnectorAccounts,
  updateConnectorAccount,
} from "../../store/connector-accounts";
import type { Db } from "../../store/database";
import type { ConnectorAccountRow } from "../../store/schema";
import type { ConnectorId, Mode } from "../connectors/connector";
import { CONNECTORS } from "../connectors/registry";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit } from "../audit/record-audit";
import { ApiError, errors } from "../errors";
import { isoNow, newAccountShortId, newUuid } from "../ids";
import type { Merchant } from "../merchants/merchants";
import { toPage, type ListPage, type ListParams } from "../pagination";
import { parseCredentialRef, resolveCredential, type SecretDeps } from "../secrets/secret-store";
import { toConnectorAccount, type ConnectorAccount } from "./connector-account";

export interface NewAccountInput {
  connector_id: ConnectorId;
  mode: Mode;
  key_kind: string;
  label: string;
  is_default: boolean;
  credential_ref: string;
}

export interface AccountUpdate {
  credential_ref?: string;
  label?: string;
  is_default?: boolean;
}

/**
 * The database's unique indexes decide default and label conflicts, so two racing
 * writers cannot both win; their violations become the spec's generic 409.
 */
function conflictFrom(error: unknown, account: Pick<NewAccountInput, "connector_id" | "mode" | "key_kind" | "label">): never {
  if (isDefaultConflict(error)) {
    throw errors.conflict(`A default account already exists for (${account.connector_id}, ${account.mode}, ${account.key_kind}). Unset it first.`);
  }
  if (isLabelConflict(error)) {
    throw errors.conflict(`The label "${account.label}" is already used for (${account.connector_id}, ${account.mode}).`);
  }
  throw error;
}

/**
 * Checks that a reference fits the connector: a stored secret must exist and have the
 * connector's shape (an env:// variable may only exist where the server runs, so
 * only its form is checked). Messages never include the value.
 */
async function checkCredential(deps: SecretDeps, connectorId: ConnectorId, ref: string): Promise<void> {
  const parsed = parseCredentialRef(ref);
  if (parsed.scheme !== "secret") return;
  let value: string;
  try {
    value = await resolveCredential(deps, ref);
  } catch (error) {
    throw new ApiError(400, "parameter_invalid", `credential_ref: ${(error as Error).message}. Store it first with \`paygate secrets put ${parsed.path}\`.`, {
      param: "credential_ref",
    });
  }
  try {
    CONNECTORS[connectorId].parseCredential(value);
  } catch (error) {
    throw new ApiError(400, "parameter_invalid", `credential_ref: the secret does not fit ${connectorId}: ${(error as Error).message}.`, {
      param: "credential_ref",
    });
  }
}

function checkConnectorRules(input: Pick<NewAccountInput, "connector_id" | "mode" | "key_kind">): void {
  const connector = CONNECTORS[input.connector_id];
  if (input.mode === "live" && !connector.liveCapable) {
    throw errors.invalid("mode", `The ${input.connector_id} connector is a sandbox simulator and has no live accounts.`);
  }
  if (!connector.keyKinds.includes(input.key_kind)) {
    throw errors.invalid("key_kind", `The ${input.connector_id} connector takes key_kind ${connector.keyKinds.join(" or ")}.`);
  }
}

/**
 * The mode a caller may manage accounts of: an API key's own (a test admin key, which
 * the sandbox hands out, must never rebind or delete a live account), or every mode
 * for the operator at the CLI (`undefined`).
 */
export type AccountReach = Mode | undefined;

export async function createConnectorAccount(deps: SecretDeps, merchant: Merchant, input: NewAccountInput, reach: AccountReach, by: AuditActor): Promise<ConnectorAccount> {
  if (reach !== undefined && input.mode !== reach) {
    throw new ApiError(403, "insufficient_permissions", `A ${reach} key cannot create ${input.mode} connector accounts.`, { param: "mode" });
  }
  checkConnectorRules(input);
  await checkCredential(deps, input.connector_id, input.credential_ref);
  const now = isoNow();
  const row: ConnectorAccountRow = {
    id: newUuid(),
    short_id: newAccountShortId(),
    merchant_id: merchant.id,
    connector_id: input.connector_id,
    mode: input.mode,
    key_kind: input.key_kind,
    label: input.label,
    is_default: input.is_default ? 1 : 0,
    credential_ref: input.credential_ref,
    is_active: 1,
    created_at: now,
    updated_at: now,
  };
  await insertConnectorAccount(deps.db, row).catch((error: unknown) => conflictFrom(error, input));
  await recordAudit(deps.db, by, { action: "connector_account.created", target: { type: "connector_account", id: row.id }, merchantId: merchant.id, mode: row.mode, details: { credential_ref: row.credential_ref } });
  return toConnectorAccount(row, merchant.short_id);
}

/** Another mode's account is "not found" to a key of this mode: existence never leaks. */
async function requireAccount(db: Db, merchant: Merchant, idOrShortId: string, reach: AccountReach): Promise<ConnectorAccountRow> {
  const row = await findConnectorAccount(db, merchant.id, idOrShortId);
  if (!row || (reach !== undefined && row.mode !== reach)) throw new ApiError(404, "connector_account_not_found", `No connector account ${idOrShortId} for this merchant.`, { param: "caid" });
  return row;
}

export async function getConnectorAccount(db: Db, merchant: Merchant, idOrShortId: string, reach: AccountReach): Promise<ConnectorAccount> {
  return toConnectorAccount(await requireAccount(db, merchant, idOrShortId, reach), merchant.short_id);
}

/** Every account of the merchant, newest first (the CLI's listing). */
export async function listMerchantAccounts(db: Db, merchant: Merchant, includeInactive: boolean): Promise<ConnectorAccount[]> {
  return (await listConnectorAccounts(db, merchant.id, { includeInactive })).map((row) => toConnectorAccount(row, merchant.short_id));
}

/** One page of the merchant's accounts in reach; `starting_after` is an account's UUID or short id. */
export async function pageMerchantAccounts(db: Db, merchant: Merchant, includeInactive: boolean, params: ListParams, reach: AccountReach): Promise<ListPage<ConnectorAccount>> {
  const after = params.startingAfter === undefined ? undefined : await findConnectorAccount(db, merchant.id, params.startingAfter);
  if (params.startingAfter !== undefined && (!after || (reach !== undefined && after.mode !== reach))) {
    throw new ApiError(400, "parameter_invalid", `starting_after: no connector account ${params.startingAfter} for this merchant.`, { param: "starting_after" });
  }
  const rows = await listConnectorAccounts(db, merchant.id, { includeInactive, ...(reach !== undefined && { mode: reach }), page: { limit: params.limit, ...(after && { after }) } });
  return toPage(rows, params.limit, (row) => toConnectorAccount(row, merchant.short_id));
}

/** Moves the account to a new secret path, renames it, or (un)sets it as default. */
export async function updateAccount(deps: SecretDeps, merchant: Merchant, idOrShortId: string, update: AccountUpdate, reach: AccountReach, by: AuditActor): Promise<ConnectorAccount> {
  const row = await requireAccount(deps.db, merchant, idOrShortId, reach);
  if (row.is_active !== 1) {
    throw new ApiError(409, "connector_account_inactive", `Connector account ${row.short_id} is inactive (deleted) and cannot be changed.`, { param: "caid" });
  }
  const connectorId = row.connector_id as ConnectorId;
  if (update.credential_ref !== undefined) await checkCredential(deps, connectorId, update.credential_ref);
  const changes = {
    ...(update.credential_ref !== undefined && { credential_ref: update.credential_ref }),
    ...(update.label !== undefined && { label: update.label }),
    ...(update.is_default !== undefined && { is_default: update.is_default ? 1 : 0 }),
    updated_at: isoNow(),
  };
  const next = { ...row, ...changes };
  await updateConnectorAccount(deps.db, row.id, changes).catch((error: unknown) =>
    conflictFrom(error, { connector_id: connectorId, mode: row.mode, key_kind: row.key_kind, label: next.label }),
  );
  await recordAudit(deps.db, by, { action: "connector_account.updated", target: { type: "connector_account", id: row.id }, merchantId: merchant.id, mode: row.mode, details: { changed: Object.keys(update) } });
  return toConnectorAccount(next, merchant.short_id);
}

/** Soft delete: inactive for good (no reactivation in v2.3), and no longer default. */
export async function deactivateAccount(db: Db, merchant: Merchant, idOrShortId: string, reach: AccountReach, by: AuditActor): Promise<void> {
  const row = await requireAccount(db, merchant, idOrShortId, reach);
  if (row.is_active === 0) return;
  await updateConnectorAccount(db, row.id, { is_active: 0, is_default: 0, updated_at: isoNow() });
  await recordAudit(db, by, { action: "connector_account.deleted", target: { type: "connector_account", id: row.id }, merchantId: merchant.id, mode: row.mode });
}
