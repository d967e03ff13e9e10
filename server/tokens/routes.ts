import type { AppContext } from "../app-context";
import { json, route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { tokenizeBody, tokenizeCard } from "./tokenize";

/** `POST /v1/tokens`: publishable or secret keys (scope `tokens:write`). */
export function tokenRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "POST",
      path: "/v1/tokens",
      scope: "tokens:write",
      handle: (req) => {
        const input = parse(tokenizeBody, req.body);
        return req.unit.commit((trx) => tokenizeCard({ db: trx, cipher: app.cipher }, req.actor, input));
      },
      present: (token) => json(201, token),
    }),
  ];
}
