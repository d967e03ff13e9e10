import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { getMerchant } from "../merchants/merchants";
import { listOf, listParams, listQuery } from "../pagination";
import { auditRecordSchema, listAudit } from "./audit-log";

const auditFilter = z.object({
  since: z.iso
    .datetime({ offset: true, error: "since must be an ISO 8601 time such as 2026-04-28T10:00:00Z." })
    .optional()
    .meta({ description: "Only records at or after this time." }),
  merchant: z.string().optional().meta({ description: "Only this merchant's records (UUID or `mrc_` short id)." }),
});

/**
 * `GET /admin/audit`: read-only; the log has no route that changes it. An admin key
 * reads its own mode's records and the mode-less ones (merchants, secrets).
 */
export function auditRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/admin/audit",
      scope: "admin",
      summary: "List the audit log, newest first",
      query: listQuery.extend(auditFilter.shape),
      responses: { 200: listOf(auditRecordSchema) },
      errors: { 404: ["merchant_not_found"] },
      handle: async (req) => {
        const { since: from, merchant } = parse(auditFilter, { since: req.query.get("since") ?? undefined, merchant: req.query.get("merchant") ?? undefined });
        return listAudit(app.db, {
          ...listParams(req.query),
          since: from === undefined ? undefined : new Date(from).toISOString(),
          merchantId: merchant === undefined ? undefined : (await getMerchant(app.db, merchant)).id,
          mode: req.actor.mode,
        });
      },
      present: (page) => json(200, page),
    }),
  ];
}
