import { byKey } from "../audit/audit-actor";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { EVENT_TYPES } from "../events/event";
import { eventRoutes } from "../events/routes";
import { json, route, type Route } from "../http/route";
import { listOf, listParams, listQuery } from "../pagination";
import {
  createEndpoint,
  deletedWebhookEndpointSchema,
  deleteEndpoint,
  getEndpointRow,
  listEndpoints,
  rotateSecret,
  toWebhookEndpoint,
  updateEndpoint,
  webhookEndpointSchema,
} from "./endpoints";
import { sendTestDelivery, testDeliveryResultSchema } from "./test-delivery";

const subscription = z.enum([...EVENT_TYPES, "*"], { error: `Each event type must be one of ${EVENT_TYPES.join(", ")}, or "*" for all.` });
const eventTypes = z.array(subscription, { error: "event_types must be an array of event types." }).min(1, { error: "event_types must name at least one event type." });
const url = z.string({ error: "url must be a string." });
const description = z.string().max(1000, { error: "description must be at most 1000 characters." });

export const createBody = z.strictObject({ url, event_types: eventTypes, description: description.optional() });
export const updateBody = z.strictObject({
  url: url.optional(),
  event_types: eventTypes.optional(),
  description: description.nullable().optional(),
  status: z.enum(["enabled", "disabled"], { error: 'status must be "enabled" or "disabled".' }).optional(),
});
export const testBody = z.strictObject({ event_type: z.enum(EVENT_TYPES, { error: `event_type must be one of ${EVENT_TYPES.join(", ")}.` }).optional() });
const noBody = z.strictObject({});
const endpointNotFound = { 404: ["webhook_endpoint_not_found"] };

/** `/v1/webhook_endpoints…` (CONTRACT §7) and `/v1/events…`. Endpoints belong to the calling key's merchant and mode. */
export function webhookRoutes(app: AppContext): Route[] {
  const id = (params: Readonly<Record<string, string>>) => params.id as string;
  return [
    route({
      method: "POST",
      path: "/v1/webhook_endpoints",
      scope: "webhooks:write",
      secretFields: ["secret"],
      summary: "Create a webhook endpoint (the signing secret is in this answer only)",
      body: createBody,
      responses: { 201: webhookEndpointSchema },
      errors: { 400: ["webhook_endpoint_limit_reached"] },
      handle: (req) => req.unit.commit((trx) => createEndpoint(trx, app.cipher, req.actor, req.body, app.targets, byKey(req.actor))),
      present: (endpoint) => json(201, endpoint),
    }),
    route({
      method: "GET",
      path: "/v1/webhook_endpoints",
      scope: "webhooks:read",
      summary: "List webhook endpoints",
      query: listQuery,
      responses: { 200: listOf(webhookEndpointSchema) },
      handle: (req) => listEndpoints(app.db, req.actor, listParams(req.query)),
      present: (page) => json(200, page),
    }),
    route({
      method: "GET",
      path: "/v1/webhook_endpoints/:id",
      scope: "webhooks:read",
      summary: "Retrieve a webhook endpoint",
      responses: { 200: webhookEndpointSchema },
      errors: endpointNotFound,
      handle: async (req) => toWebhookEndpoint(await getEndpointRow(app.db, req.actor, id(req.params))),
      present: (endpoint) => json(200, endpoint),
    }),
    route({
      method: "PATCH",
      path: "/v1/webhook_endpoints/:id",
      scope: "webhooks:write",
      summary: "Update a webhook endpoint",
      body: updateBody,
      responses: { 200: webhookEndpointSchema },
      errors: endpointNotFound,
      handle: (req) => req.unit.commit((trx) => updateEndpoint(trx, req.actor, id(req.params), req.body, app.targets, byKey(req.actor))),
      present: (endpoint) => json(200, endpoint),
    }),
    route({
      method: "DELETE",
      path: "/v1/webhook_endpoints/:id",
      scope: "webhooks:write",
      summary: "Delete a webhook endpoint",
      responses: { 200: deletedWebhookEndpointSchema },
      errors: endpointNotFound,
      handle: (req) => req.unit.commit((trx) => deleteEndpoint(trx, req.actor, id(req.params), byKey(req.actor))),
      present: (deleted) => json(200, deleted),
    }),
    route({
      method: "POST",
      path: "/v1/webhook_endpoints/:id/rotate_secret",
      scope: "webhooks:write",
      secretFields: ["secret"],
      summary: "Replace an endpoint's signing secret (the new secret is in this answer only; the old one stays valid for a grace period)",
      body: noBody,
      responses: { 200: webhookEndpointSchema },
      errors: endpointNotFound,
      handle: (req) => req.unit.commit((trx) => rotateSecret(trx, app.cipher, req.actor, id(req.params), byKey(req.actor))),
      present: (endpoint) => json(200, endpoint),
    }),
    route({
      method: "POST",
      path: "/v1/webhook_endpoints/:id/test",
      scope: "webhooks:write",
      summary: "Send a signed sample event to the endpoint now and report the answer",
      body: testBody,
      responses: { 200: testDeliveryResultSchema },
      errors: endpointNotFound,
      handle: (req) => sendTestDelivery(app, req.actor, id(req.params), req.body.event_type),
      present: (result) => json(200, result),
    }),
    ...eventRoutes(app),
  ];
}
