import type { ConnectorId, Mode } from "../connectors/connector";
import { ApiError, errors, type AvailableAccount } from "../errors";
import { UUID_PATTERN } from "../ids";
import type { ConnectorAccount } from "./connector-account";

export const SHORT_ID_PATTERN = /^ca_[a-z0-9]{10}$/;

export interface ResolutionRequest {
  /** The calling key's mode (spec rule 3: mode follows the key). */
  mode: Mode;
  /**
   * Body `connector`, else the merchant's first routing entry, else undefined (no
   * routing: the sandbox routes to `mock`, see `routedConnector`).
   */
  routed: ConnectorId | undefined;
  bodySelector: string | undefined;
  headerSelector: string | undefined;
  /**
   * Follow-ons only (capture, refund, void): the account the payment settled
   * through, `null` if it no longer exists. `undefined` for new charges.
   */
  origin?: ConnectorAccount | null;
  /**
   * The caller's merchant's accounts this decision needs: the named one whatever its
   * state when a selector is given, else the active ones of the key's mode (others
   * may be present and are ignored).
   */
  accounts: readonly ConnectorAccount[];
  /** Whether the caller is authenticated for the merchant owning `accounts`. */
  callerIsOwner: boolean;
}

const PARAM = { param: "connector_account" };

const required = (message: string, available?: AvailableAccount[]) =>
  new ApiError(400, "connector_account_required", message, available ? { ...PARAM, available_accounts: available } : PARAM);

const available = (account: ConnectorAccount): AvailableAccount => ({
  short_id: account.short_id,
  connector_id: account.connector_id,
  mode: account.mode,
  key_kind: account.key_kind,
  label: account.label,
  is_default: account.is_default,
});

const names = (account: ConnectorAccount, selector: string) =>
  account.short_id === selector || account.id === selector.toLowerCase();

/**
 * Picks the connector account a charge or follow-on settles through, or throws the
 * exact error of the spec's resolution rules 1-11 (CONTRACT §6 settles rule 5).
 * Pure: everything it needs is in the request. Nothing else decides an account.
 */
export function resolveAccount(req: ResolutionRequest): ConnectorAccount {
  const body = req.bodySelector;
  const header = req.headerSelector;
  // Rule 1: both selectors must agree.
  if (body !== undefined && header !== undefined && normalize(body) !== normalize(header)) {
    throw new ApiError(400, "connector_account_ambiguous", "The connector_account body field and the X-Connector-Account header name different accounts.", PARAM);
  }
  const selector = body ?? header;
  // Rule 2: a short_id or a canonical UUID.
  if (selector !== undefined && !SHORT_ID_PATTERN.test(selector) && !UUID_PATTERN.test(selector)) {
    throw new ApiError(400, "invalid_connector_account", "connector_account must be a ca_ short id (ca_ and 10 lowercase letters or digits) or a UUID.", PARAM);
  }
  if (req.origin !== undefined) return resolveFollowOn(req.origin, selector);
  if (selector !== undefined) return resolveSelected(req, selector);
  return resolveDefault(req);
}

function normalize(selector: string): string {
  return UUID_PATTERN.test(selector) ? selector.toLowerCase() : selector;
}

/** Rules 8-9: follow-ons settle through the originating account, which a selector may only repeat. */
function resolveFollowOn(origin: ConnectorAccount | null, selector: string | undefined): ConnectorAccount {
  if (selector !== undefined && (origin === null || !names(origin, selector))) {
    throw new ApiError(400, "connector_account_override_forbidden", "Capture, refund and void settle through the payment's original connector account; omit connector_account or repeat it.", PARAM);
  }
  if (origin === null || !origin.is_active) {
    throw errors.conflict("The connector account this payment settled through is no longer active, so it cannot be captured, refunded or voided here.");
  }
  return origin;
}

/** Rules 6-7: a named account must be the caller's, active, on the routed connector and the key's mode. */
function resolveSelected(req: ResolutionRequest, selector: string): ConnectorAccount {
  const account = req.accounts.find((a) => names(a, selector));
  // Unknown and foreign accounts get the same answer: no enumeration of other merchants.
  if (!account || !req.callerIsOwner) {
    throw new ApiError(404, "connector_account_not_found", `No connector account ${selector}.`, PARAM);
  }
  if (!account.is_active) {
    throw new ApiError(409, "connector_account_inactive", `Connector account ${account.short_id} is inactive.`, PARAM);
  }
  // Mode first: a key of the other mode can never use the account, whatever the routing.
  if (account.mode !== req.mode) {
    throw new ApiError(409, "connector_account_mode_mismatch", `Connector account ${account.short_id} is a ${account.mode} account; this key works in ${req.mode} mode.`, PARAM);
  }
  const routed = routedConnector(req);
  if (routed !== undefined && account.connector_id !== routed) {
    const hint = req.routed === undefined ? ` (no routing is configured; pass connector: "${account.connector_id}" to use it)` : "";
    throw new ApiError(409, "connector_account_mismatch", `Connector account ${account.short_id} is a ${account.connector_id} account, but this payment is routed to ${routed}${hint}.`, PARAM);
  }
  return account;
}

/** Rules 3-5 and 11: no selector, so route, then take the only or the default account. */
function resolveDefault(req: ResolutionRequest): ConnectorAccount {
  const active = req.accounts.filter((a) => a.is_active && a.mode === req.mode);
  const connector = routedConnector(req) ?? liveFallbackConnector(active);
  const candidates = active.filter((a) => a.connector_id === connector);
  if (candidates.length === 0) {
    throw required(`No active ${req.mode} ${connector} connector account. Create one (POST /admin/merchants/{id}/connector-accounts); there is no platform-wide credential.`);
  }
  if (candidates.length === 1) return candidates[0] as ConnectorAccount;
  const defaults = candidates.filter((a) => a.is_default);
  if (defaults.length === 1) return defaults[0] as ConnectorAccount;
  throw required(
    `Several active ${req.mode} ${connector} accounts and no single default: name one with connector_account.`,
    req.callerIsOwner ? candidates.map(available) : undefined,
  );
}

/**
 * Sandbox rule 3: a test key with no routing routes to the mock connector. In live
 * mode with no routing, nothing is routed yet (a selector's connector is taken as is).
 */
function routedConnector(req: ResolutionRequest): ConnectorId | undefined {
  return req.routed ?? (req.mode === "test" ? "mock" : undefined);
}

/** Live mode, no routing and no selector: the one connector that has active live accounts. */
function liveFallbackConnector(active: readonly ConnectorAccount[]): ConnectorId {
  const connectors = [...new Set(active.map((a) => a.connector_id))];
  if (connectors.length === 1) return connectors[0] as ConnectorId;
  throw required(
    connectors.length === 0
      ? "No active live connector account. Create one; there is no platform-wide credential."
      : `Live accounts exist on ${connectors.join(", ")}: set a routing priority (PUT /v1/routing) or pass connector.`,
  );
}
