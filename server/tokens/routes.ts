import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { cardTokenSchema } from "./card-token";
import { tokenizeBody, tokenizeCard } from "./tokenize";

/** `POST /v1/tokens`: publishable or secret keys (scope `tokens:write`). */
export function tokenRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/tokens",
      scope: "tokens:write",
      resetWithTestData: true,
      summary: "Exchange a card for a token (the number is stored encrypted, the CVC dropped)",
      body: tokenizeBody,
      responses: { 201: cardTokenSchema },
      errors: { 400: ["test_card_required"] },
      handle: (req) => req.unit.commit((trx) => tokenizeCard({ db: trx, cipher: app.cipher }, req.actor, req.body)),
      present: (token) => json(201, token),
    }),
  ];
}
