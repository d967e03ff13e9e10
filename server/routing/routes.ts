import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { CONNECTOR_IDS } from "../connectors/registry";
import type { ConnectorId } from "../connectors/connector";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { getMerchantRouting, setMerchantRouting } from "./routing";

export const putBody = z.strictObject({ connectors: z.array(z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]])).max(CONNECTOR_IDS.length) });

/** `GET/PUT /v1/routing`: the calling key's merchant and mode. */
export function routingRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/routing",
      scope: "payments:read",
      handle: (req) => getMerchantRouting(app.db, req.actor.merchantId, req.actor.mode),
      present: (routing) => json(200, routing),
    }),
    route({
      method: "PUT",
      path: "/v1/routing",
      scope: "routing:write",
      handle: (req) => {
        const { connectors } = parse(putBody, req.body);
        return req.unit.commit((trx) => setMerchantRouting(trx, req.actor.merchantId, req.actor.mode, connectors, byKey(req.actor)));
      },
      present: (routing) => json(200, routing),
    }),
  ];
}
