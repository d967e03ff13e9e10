import type { AppContext } from "../app-context";
import type { Route } from "../http/route";

/** `/v1/webhook_endpoints…` and `/v1/events…`. */
export function webhookRoutes(_app: AppContext): Route[] {
  return [];
}
