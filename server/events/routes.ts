import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import type { Actor } from "../keys/actor";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { listOf, listParams, listQuery } from "../pagination";
import { eventWithDeliveriesSchema, getEventRow, listEvents, withDeliveries } from "../webhooks/events-api";
import { replayDeliveries } from "../webhooks/replay";
import { EVENT_TYPES, eventSchema } from "./event";
import { requireScope } from "../keys/authenticator";

const typeFilter = z.object({ type: z.enum(EVENT_TYPES, { error: `type must be one of ${EVENT_TYPES.join(", ")}.` }).optional() });
const eventNotFound = { 404: ["event_not_found"] };

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
      summary: "List events, newest first",
      query: listQuery.extend(typeFilter.shape),
      responses: { 200: listOf(eventSchema) },
      handle: (req) => listEvents(app.db, readingPayments(req.actor), listParams(req.query), parse(typeFilter, { type: req.query.get("type") ?? undefined }).type),
      present: (page) => json(200, page),
    }),
    route({
      method: "GET",
      path: "/v1/events/:id",
      scope: "webhooks:read",
      summary: "Retrieve an event with its deliveries",
      responses: { 200: eventWithDeliveriesSchema },
      errors: eventNotFound,
      handle: async (req) => withDeliveries(app.db, await getEventRow(app.db, readingPayments(req.actor), req.params.id as string)),
      present: (event) => json(200, event),
    }),
    route({
      method: "POST",
      path: "/v1/events/:id/replay",
      scope: "webhooks:write",
      resetWithTestData: true,
      summary: "Deliver an event again to every endpoint it went to, or to one of them",
      body: z.strictObject({ endpoint: z.string().optional() }),
      responses: { 200: eventWithDeliveriesSchema },
      errors: eventNotFound,
      handle: async (req) => {
        const { endpoint } = req.body;
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
