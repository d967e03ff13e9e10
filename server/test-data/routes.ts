import { z } from "zod";
import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { assertMayReset, resetResultSchema, resetTestData } from "./reset";

/**
 * `POST /v1/test_data/reset`: the same reset as `paygate reset`, for the calling test
 * key's merchant. Not idempotent-keyed: it deletes the key's own idempotency records,
 * and running it twice leaves the same empty slate.
 */
export function testDataRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/test_data/reset",
      scope: "payments:write",
      idempotent: false,
      summary: "Delete the merchant's test-mode data (payments, refunds, card tokens, events, deliveries, test keys' idempotency records); test secret keys only",
      body: z.strictObject({}),
      responses: { 200: resetResultSchema },
      handle: async (req) => {
        assertMayReset(req.actor);
        return req.unit.commit((trx) => resetTestData(trx, req.actor.merchantId));
      },
      present: (result) => json(200, result),
    }),
  ];
}
