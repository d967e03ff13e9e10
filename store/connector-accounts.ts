import { markSettingsChanged } from "./settings-changes";
import type { Db } from "./database";
import { violatesUnique } from "./db-errors";
import type { ConnectorAccountRow, ConnectorAccountsTable } from "./schema";
import { UUID_PATTERN } from "../server/ids";
import { olderThan, type Cursor } from "./keyset";

export async function insertConnectorAccount(db: Db, row: ConnectorAccountsTable): Promise<void> {
  await db.insertInto("connector_accounts").values(row).execute();
  markSettingsChanged();
}

/** The write broke `connector_accounts_one_default`: a second default for (merchant, connector, mode, key_kind). */
export const isDefaultConflict = (error: unknown) =>
  violatesUnique(error, "connector_accounts", ["merchant_id", "connector_id", "mode", "key_kind"]);

/** The write broke `connector_accounts_label`: a label already used by an active account of (merchant, connector, mode). */
export const isLabelConflict = (error: unknown) => violatesUnique(error, "connector_accounts", ["merchant_id", "connector_id", "mode", "label"]);

/** A merchant's account by UUID or `ca_` short id. */
export async function findConnectorAccount(db: Db, merchantId: string, idOrShortId: string): Promise<ConnectorAccountRow | undefined> {
  const byId = UUID_PATTERN.test(idOrShortId);
  return db
    .selectFrom("connector_accounts")
    .selectAll()
    .where("merchant_id", "=", merchantId)
    .where(byId ? "id" : "short_id", "=", byId ? idOrShortId.toLowerCase() : idOrShortId)
    .executeTakeFirst();
}

export async function findConnectorAccountById(db: Db, id: string): Promise<ConnectorAccountRow | undefined> {
  return db.selectFrom("connector_accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

export interface AccountFilter {
  includeInactive?: boolean;
  mode?: string;
  /** A page: at most `limit + 1` rows (so the caller can tell `has_more`), after `after`. */
  page?: { limit: number; after?: Cursor };
}

/** Newest first. */
export async function listConnectorAccounts(db: Db, merchantId: string, filter: AccountFilter = {}): Promise<ConnectorAccountRow[]> {
  let query = db.selectFrom("connector_accounts").selectAll().where("merchant_id", "=", merchantId);
  if (!filter.includeInactive) query = query.where("is_active", "=", 1);
  if (filter.mode) query = query.where("mode", "=", filter.mode as ConnectorAccountRow["mode"]);
  if (filter.page?.after) query = query.where(olderThan(filter.page.after));
  if (filter.page) query = query.limit(filter.page.limit + 1);
  return query.orderBy("created_at", "desc").orderBy("id", "desc").execute();
}

export async function updateConnectorAccount(db: Db, id: string, update: Partial<ConnectorAccountsTable>): Promise<void> {
  await db.updateTable("connector_accounts").set(update).where("id", "=", id).execute();
  markSettingsChanged();
}
