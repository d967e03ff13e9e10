import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { listParams } from "../pagination";
import { createMerchant, getMerchant, listMerchants } from "./merchants";

export const merchantName = z.string().trim().min(1).max(200);
const createBody = z.strictObject({ name: merchantName });

/** Admin API for merchants (CONTRACT §6); admin keys only. */
export function merchantRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "POST",
      path: "/admin/merchants",
      scope: "admin",
      handle: (req) => {
        const { name } = parse(createBody, req.body);
        return req.unit.commit((trx) => createMerchant(trx, name, byKey(req.actor)));
      },
      present: (merchant) => json(201, merchant),
    }),
    route({
      method: "GET",
      path: "/admin/merchants",
      scope: "admin",
      handle: (req) => listMerchants(app.db, listParams(req.query)),
      present: (page) => json(200, page),
    }),
    route({
      method: "GET",
      path: "/admin/merchants/:merchantId",
      scope: "admin",
      handle: (req) => getMerchant(app.db, req.params.merchantId as string),
      present: (merchant) => json(200, merchant),
    }),
  ];
}
