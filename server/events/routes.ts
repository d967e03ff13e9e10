import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import type { Actor } from "../keys/actor";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { listParams } from "../pagination";
import { getEventRow, listEvents, withDeliveries } from "../webhooks/events-api";
import { replayDeliveries } from "../webhooks/replay";
import { EVENT_TYPES } from "./event";
import { requireScope } from "../keys/authenticator";

const typeFilter = z.enum(EVENT_TYPES, { error: `type must be one of ${EVENT_TYPES.join(", ")}.` }).optional();

/**
 * Events carry the payment as `data`: reading them takes `payments:read` besides the
 * route's webhooks scope, so a webhooks-only key never reads payment data.
 */
export function readingPayments(actor: Actor): Actor {
  requireScope(actor, "payments:read");
  return actor;
}

/** `/v1/events…`: the merchant's events (in the key's mode), their deliveries, and replay. */
export function eventRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/events",
      scope: "webhooks:read",
      handle: (req) => listEvents(app.db, readingPayments(req.actor), listParams(req.query), parse(z.object({ type: typeFilter }), { type: req.query.get("type") ?? undefined }).type),
      present: (page) => json(200, page),
    }),
    route({
      method: "GET",
      path: "/v1/events/:id",
      scope: "webhooks:read",
      handle: async (req) => withDeliveries(app.db, await getEventRow(app.db, readingPayments(req.actor), req.params.id as string)),
      present: (event) => json(200, event),
    }),
    route({
      method: "POST",
      path: "/v1/events/:id/replay",
      scope: "webhooks:write",
      handle: async (req) => {
        const { endpoint } = parse(z.strictObject({ endpoint: z.string().optional() }), req.body);
        const event = await getEventRow(app.db, readingPayments(req.actor), req.params.id as string);
        const replayed = await req.unit.commit(async (trx) => {
          await replayDeliveries(trx, { eventIds: [event.id], owner: req.actor, endpointId: endpoint }, byKey(req.actor));
          return withDeliveries(trx, event);
        });
        app.webhooks.kick();
        return replayed;
      },
      present: (event) => json(200, event),
    }),
  ];
}
