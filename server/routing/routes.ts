import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { CONNECTOR_IDS } from "../connectors/registry";
import type { ConnectorId } from "../connectors/connector";
import { json, route, type Route } from "../http/route";
import { getMerchantRouting, routingSchema, setMerchantRouting } from "./routing";

export const putBody = z.strictObject({ connectors: z.array(z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]])).max(CONNECTOR_IDS.length) });

/** `GET/PUT /v1/routing`: the calling key's merchant and mode. */
export function routingRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/routing",
      scope: "payments:read",
      summary: "The connector priority for the caller's merchant and mode",
      responses: { 200: routingSchema },
      handle: (req) => getMerchantRouting(app.db, req.actor.merchantId, req.actor.mode),
      present: (routing) => json(200, routing),
    }),
    route({
      method: "PUT",
      path: "/v1/routing",
      scope: "routing:write",
      summary: "Set the connector priority for the caller's merchant and mode",
      body: putBody,
      responses: { 200: routingSchema },
      handle: (req) => req.unit.commit((trx) => setMerchantRouting(trx, req.actor.merchantId, req.actor.mode, req.body.connectors, byKey(req.actor))),
      present: (routing) => json(200, routing),
    }),
  ];
}
