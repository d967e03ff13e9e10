import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { listOf, listParams, listQuery } from "../pagination";
import { createMerchant, getMerchant, listMerchants, merchantSchema } from "./merchants";

export const merchantName = z.string().trim().min(1).max(200);
const createBody = z.strictObject({ name: merchantName });

/** Admin API for merchants (CONTRACT §6); admin keys only. */
export function merchantRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "POST",
      path: "/admin/merchants",
      scope: "admin",
      summary: "Create a merchant",
      body: createBody,
      responses: { 201: merchantSchema },
      handle: (req) => req.unit.commit((trx) => createMerchant(trx, req.body.name, byKey(req.actor))),
      present: (merchant) => json(201, merchant),
    }),
    route({
      method: "GET",
      path: "/admin/merchants",
      scope: "admin",
      summary: "List merchants",
      query: listQuery,
      responses: { 200: listOf(merchantSchema) },
      handle: (req) => listMerchants(app.db, listParams(req.query)),
      present: (page) => json(200, page),
    }),
    route({
      method: "GET",
      path: "/admin/merchants/:merchantId",
      scope: "admin",
      summary: "Retrieve a merchant by id or short id",
      responses: { 200: merchantSchema },
      errors: { 404: ["merchant_not_found"] },
      handle: (req) => getMerchant(app.db, req.params.merchantId as string),
      present: (merchant) => json(200, merchant),
    }),
  ];
}
