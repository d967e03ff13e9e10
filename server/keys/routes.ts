import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { getMerchant } from "../merchants/merchants";
import { listParams } from "../pagination";
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
      handle: (req) => {
        const input = parse(createBody, req.body);
        const { actor } = req;
        return req.unit.commit((trx) => createApiKey(trx, { merchantId: actor.merchantId, mode: actor.mode, role: "merchant", ...input }, actor, byKey(actor)));
      },
      present: (key) => json(201, key),
    }),
    route({
      method: "GET",
      path: "/v1/api-keys",
      scope: "keys:read",
      handle: (req) => listCallerApiKeys(app.db, req.actor, listParams(req.query)),
      present: (page) => json(200, page),
    }),
    route({
      method: "POST",
      path: "/v1/api-keys/:keyId/rotate",
      scope: "keys:write",
      secretFields: ["key"],
      handle: async (req) => {
        parse(z.strictObject({}), req.body);
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
      handle: async (req) => {
        const input = parse(adminCreateBody, req.body);
        const merchant = await getMerchant(app.db, req.params.merchantId as string);
        return req.unit.commit((trx) => createApiKey(trx, { ...input, merchantId: merchant.id, mode: input.mode ?? req.actor.mode }, req.actor, byKey(req.actor)));
      },
      present: (key) => json(201, key),
    }),
  ];
}
