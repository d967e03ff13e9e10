import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { getMerchant } from "../merchants/merchants";
import { listParams } from "../pagination";
import { listAudit } from "./audit-log";

const since = z.iso.datetime({ offset: true, error: "since must be an ISO 8601 time such as 2026-04-28T10:00:00Z." }).optional();

/** `GET /admin/audit`: read-only; the log has no route that changes it. */
export function auditRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/admin/audit",
      scope: "admin",
      handle: async (req) => {
        const from = parse(z.object({ since }), { since: req.query.get("since") ?? undefined }).since;
        const merchant = req.query.get("merchant");
        return listAudit(app.db, {
          ...listParams(req.query),
          since: from === undefined ? undefined : new Date(from).toISOString(),
          merchantId: merchant === null ? undefined : (await getMerchant(app.db, merchant)).id,
        });
      },
      present: (page) => json(200, page),
    }),
  ];
}
