import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { assertMayReset, resetResultSchema, resetTestData } from "./reset";

/**
 * `POST /v1/test_data/reset`: the same reset as `paygate reset`, for the calling test
 * key's merchant. It needs an Idempotency-Key like every POST: a custom header, which
 * no cross-site HTML form or simple request can send (in development mode, where no
 * API key is needed, that is what keeps a web page from wiping the data). Its answer
 * is kept and replayed like any other: the reset deletes only the idempotency records
 * of the routes in `table` marked `resetWithTestData`, never its own. `table` is the
 * whole route table, read when a reset runs.
 */
export function testDataRoutes(app: AppContext, table: () => readonly Route[]): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/test_data/reset",
      scope: "payments:write",
      summary: "Delete the merchant's test-mode data (payments, refunds, card tokens, events, deliveries, their idempotency records); test secret keys only",
      body: z.strictObject({}),
      responses: { 200: resetResultSchema },
      handle: async (req) => {
        assertMayReset(req.actor);
        return req.unit.commit((trx) => resetTestData(trx, req.actor.merchantId, table()));
      },
      present: (result) => json(200, result),
    }),
  ];
}
