import { findConnectorAccount, findConnectorAccountById, listConnectorAccounts } from "../../store/connector-accounts";
import type { Db } from "../../store/database";
import type { AppContext } from "../app-context";
import { getRouting } from "../../store/routing";
import type { ConnectorId } from "../connectors/connector";
import type { Actor } from "../keys/actor";
import { toConnectorAccount, type ConnectorAccount } from "./connector-account";
import { resolveAccount } from "./resolve-account";

export interface Selectors {
  /** Body `connector_account`. */
  body: string | undefined;
  /** `X-Connector-Account` header. */
  header: string | undefined;
}

/**
 * The account a new charge settles through. Loads only what `resolveAccount` decides
 * on: the named account (in any state, so it can say why it is refused), or else the
 * merchant's active accounts of the key's mode.
 */
export async function selectAccountForCharge(app: Pick<AppContext, "db" | "settings">, actor: Actor, requested: ConnectorId | undefined, selectors: Selectors): Promise<ConnectorAccount> {
  const { db, settings } = app;
  const selector = selectors.body ?? selectors.header;
  const owner = `${actor.merchantId}:${actor.mode}`;
  const rows =
    selector === undefined
      ? await settings.get(`accounts:${owner}`, () => listConnectorAccounts(db, actor.merchantId, { mode: actor.mode }))
      : [await findConnectorAccount(db, actor.merchantId, selector)].filter((row) => row !== undefined);
  const routing = requested === undefined ? await settings.get(`routing:${owner}`, () => getRouting(db, actor.merchantId, actor.mode)) : undefined;
  return resolveAccount({
    mode: actor.mode,
    routed: requested ?? (routing?.connectors[0] as ConnectorId | undefined),
    bodySelector: selectors.body,
    headerSelector: selectors.header,
    accounts: rows.map((row) => toConnectorAccount(row, actor.merchantShortId)),
    callerIsOwner: true,
  });
}

/** The account a capture, refund or void settles through: the payment's own. */
export async function selectAccountForFollowOn(db: Db, actor: Actor, originAccountId: string, selectors: Selectors): Promise<ConnectorAccount> {
  const origin = await findConnectorAccountById(db, originAccountId);
  return resolveAccount({
    mode: actor.mode,
    routed: undefined,
    bodySelector: selectors.body,
    headerSelector: selectors.header,
    origin: origin ? toConnectorAccount(origin, actor.merchantShortId) : null,
    accounts: [],
    callerIsOwner: true,
  });
}
