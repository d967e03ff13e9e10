import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { getMerchant } from "../merchants/merchants";
import { listOf, listParams, listQuery } from "../pagination";
import { apiKeySchema } from "./api-key";
import { createApiKey, listCallerApiKeys, revokeApiKey, rotateApiKey } from "./api-keys";
import { SCOPES } from "./scopes";

const keyName = z.string().trim().min(1).max(200);
const keyType = z.enum(["secret", "publishable"]);
const scopes = z.array(z.enum(SCOPES)).min(1);

const createBody = z.strictObject({ name: keyName, type: keyType.default("secret"), scopes: scopes.optional() });
const adminCreateBody = createBody.extend({
  mode: z.enum(["test", "live"]).optional(),
  role: z.enum(["merchant", "admin"]).default("merchant"),
});

/** `/v1/api-keys` for a merchant's own keys, and the admin route that mints any merchant's keys. */
export function keyRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/api-keys",
      scope: "keys:write",
      secretFields: ["key"],
      summary: "Create an API key for the caller's merchant and mode (the plaintext is in this answer only)",
      body: createBody,
      responses: { 201: apiKeySchema },
      handle: (req) => {
        const { actor } = req;
        return req.unit.commit((trx) => createApiKey(trx, { merchantId: actor.merchantId, mode: actor.mode, role: "merchant", ...req.body }, actor, byKey(actor)));
      },
      present: (key) => json(201, key),
    }),
    route({
      method: "GET",
      path: "/v1/api-keys",
      scope: "keys:read",
      summary: "List the merchant's API keys",
      query: listQuery,
      responses: { 200: listOf(apiKeySchema) },
      handle: (req) => listCallerApiKeys(app.db, req.actor, listParams(req.query)),
      present: (page) => json(200, page),
    }),
    route({
      method: "POST",
      path: "/v1/api-keys/:keyId/rotate",
      scope: "keys:write",
      secretFields: ["key"],
      summary: "Replace an API key with a new one (the plaintext is in this answer only)",
      body: z.strictObject({}),
      responses: { 200: apiKeySchema },
      errors: { 404: ["api_key_not_found"], 409: ["api_key_revoked"] },
      handle: async (req) => {
        const key = await req.unit.commit((trx) => rotateApiKey(trx, req.actor.merchantId, req.params.keyId as string, req.actor, byKey(req.actor)));
        app.auth.invalidate();
        return key;
      },
      present: (key) => json(200, key),
    }),
    route({
      method: "DELETE",
      path: "/v1/api-keys/:keyId",
      scope: "keys:write",
      summary: "Revoke an API key",
      responses: { 200: apiKeySchema.pick({ id: true, object: true, status: true, revoked_at: true }) },
      errors: { 404: ["api_key_not_found"] },
      handle: async (req) => {
        const key = await req.unit.commit((trx) => revokeApiKey(trx, req.actor.merchantId, req.params.keyId as string, req.actor, byKey(req.actor)));
        app.auth.invalidate();
        return { id: key.id, object: key.object, status: key.status, revoked_at: key.revoked_at };
      },
      present: (body) => json(200, body),
    }),
    route({
      method: "POST",
      path: "/admin/merchants/:merchantId/api-keys",
      scope: "admin",
      secretFields: ["key"],
      summary: "Create an API key for any merchant (the plaintext is in this answer only)",
      body: adminCreateBody,
      responses: { 201: apiKeySchema },
      errors: { 404: ["merchant_not_found"] },
      handle: async (req) => {
        const input = req.body;
        const merchant = await getMerchant(app.db, req.params.merchantId as string);
        return req.unit.commit((trx) => createApiKey(trx, { ...input, merchantId: merchant.id, mode: input.mode ?? req.actor.mode }, req.actor, byKey(req.actor)));
      },
      present: (key) => json(201, key),
    }),
  ];
}
