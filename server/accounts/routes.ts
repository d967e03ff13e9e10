import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { CONNECTOR_IDS } from "../connectors/registry";
import type { ConnectorId } from "../connectors/connector";
import { errors } from "../errors";
import { json, route, type Route } from "../http/route";
import { listOf, listParams, listQuery } from "../pagination";
import { getMerchant } from "../merchants/merchants";
import { connectorAccountSchema } from "./connector-account";
import { createConnectorAccount, deactivateAccount, getConnectorAccount, pageMerchantAccounts, updateAccount } from "./accounts";

const label = z.string().trim().min(1).max(100);
const credentialRef = z.string().min(1).max(300);

export const newAccountBody = z.strictObject({
  connector_id: z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]]),
  mode: z.enum(["test", "live"]),
  key_kind: z.string().min(1).max(50),
  label,
  is_default: z.boolean().default(false),
  credential_ref: credentialRef,
});

export const accountUpdateBody = z.strictObject({
  credential_ref: credentialRef.optional(),
  label: label.optional(),
  is_default: z.boolean().optional(),
  is_active: z.unknown().optional(),
});

const BASE = "/admin/merchants/:merchantId/connector-accounts";
const notFound = { 404: ["merchant_not_found", "connector_account_not_found"] };

/** Admin API for connector accounts (spec "Connector accounts (admin)", CONTRACT §6). */
export function accountRoutes(app: AppContext): Route[] {
  const merchantOf = (params: Readonly<Record<string, string>>) => getMerchant(app.db, params.merchantId as string);
  return [
    route({
      method: "POST",
      path: BASE,
      scope: "admin",
      summary: "Add a connector account to a merchant",
      body: newAccountBody,
      responses: { 201: connectorAccountSchema },
      errors: { 404: ["merchant_not_found"], 409: ["conflict"] },
      handle: async (req) => {
        const merchant = await merchantOf(req.params);
        return req.unit.commit((trx) => createConnectorAccount({ db: trx, cipher: app.cipher }, merchant, req.body, req.actor.mode, byKey(req.actor)));
      },
      present: (account) => json(201, account),
    }),
    route({
      method: "GET",
      path: BASE,
      scope: "admin",
      summary: "List a merchant's connector accounts",
      query: listQuery.extend({ include_inactive: z.enum(["true", "false"]).optional() }),
      responses: { 200: listOf(connectorAccountSchema) },
      errors: { 404: ["merchant_not_found"] },
      handle: async (req) => pageMerchantAccounts(app.db, await merchantOf(req.params), req.query.get("include_inactive") === "true", listParams(req.query), req.actor.mode),
      present: (page) => json(200, page),
    }),
    route({
      method: "GET",
      path: `${BASE}/:caid`,
      scope: "admin",
      summary: "Retrieve a connector account",
      responses: { 200: connectorAccountSchema },
      errors: notFound,
      handle: async (req) => getConnectorAccount(app.db, await merchantOf(req.params), req.params.caid as string, req.actor.mode),
      present: (account) => json(200, account),
    }),
    route({
      method: "PATCH",
      path: `${BASE}/:caid`,
      scope: "admin",
      idempotent: true,
      summary: "Update a connector account's credential reference, label or default flag",
      body: accountUpdateBody,
      responses: { 200: connectorAccountSchema },
      errors: { ...notFound, 409: ["conflict", "connector_account_inactive"] },
      handle: async (req) => {
        const { is_active, ...update } = req.body;
        if (is_active !== undefined) {
          throw errors.invalid("is_active", "is_active cannot be changed with PATCH: DELETE deactivates an account, and v2.3 has no reactivation.");
        }
        const merchant = await merchantOf(req.params);
        return req.unit.commit((trx) => updateAccount({ db: trx, cipher: app.cipher }, merchant, req.params.caid as string, update, req.actor.mode, byKey(req.actor)));
      },
      present: (account) => json(200, account),
    }),
    route({
      method: "DELETE",
      path: `${BASE}/:caid`,
      scope: "admin",
      idempotent: true,
      summary: "Deactivate a connector account",
      responses: { 204: null },
      errors: notFound,
      handle: async (req) => {
        const merchant = await merchantOf(req.params);
        return req.unit.commit((trx) => deactivateAccount(trx, merchant, req.params.caid as string, req.actor.mode, byKey(req.actor)));
      },
      present: () => ({ status: 204 }),
    }),
  ];
}
