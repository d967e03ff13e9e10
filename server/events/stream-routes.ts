import { readingPayments } from "./routes";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { errors } from "../errors";
import { route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { EVENT_TYPES } from "./event";
import { eventStream } from "./stream";

const EVENT_ID = /^evt_[0-9a-z]{24}$/;

const streamQuery = z.object({
  types: z.array(z.enum(EVENT_TYPES, { error: `types must be a comma-separated list of ${EVENT_TYPES.join(", ")}.` })),
});

/**
 * `GET /v1/events/stream`: the key's merchant and mode's events as server-sent events,
 * resumable with `Last-Event-ID`. Secret keys only: events carry payment data.
 */
export function eventStreamRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/events/stream",
      scope: "webhooks:read",
      handle: async (req) => {
        const typesText = req.query.get("types");
        const { types } = parse(streamQuery, { types: typesText ? typesText.split(",").map((t) => t.trim()) : [] });
        const after = req.headers.get("last-event-id") ?? undefined;
        if (after !== undefined && !EVENT_ID.test(after)) throw errors.invalid("Last-Event-ID", "Last-Event-ID must be an event id (evt_…).");
        const actor = readingPayments(req.actor);
        return eventStream(app.db, { owner: { merchantId: actor.merchantId, mode: actor.mode }, types, after });
      },
      present: (stream) => ({ status: 200, headers: { "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no" }, stream }),
    }),
  ];
}
