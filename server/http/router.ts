import { H3, getRouterParams, type H3Event } from "h3";
import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { OPENAPI_PATH } from "../openapi/document";
import { answerError, runRoute } from "./pipeline";
import type { Route } from "./route";

const notFound = () => new ApiError(404, "resource_not_found", `Unrecognized request URL. See the API reference at ${OPENAPI_PATH} for the available paths.`);

/**
 * Builds the h3 app from route declarations. Each path is registered once for every
 * method so that a known path with the wrong method answers 405 with `Allow`, and an
 * unknown path answers 404, both in the error envelope.
 */
export function createRouter(app: AppContext, routes: readonly Route[]): H3 {
  const byPath = new Map<string, Route[]>();
  for (const route of routes) {
    const list = byPath.get(route.path) ?? [];
    list.push(route);
    byPath.set(route.path, list);
  }
  // h3 itself only fails before routing, on a malformed URL; every other answer comes
  // from the handlers below, which never throw.
  const h3 = new H3({
    onError: (error, event) =>
      answerError(app, event, error.status === 400 ? new ApiError(400, "invalid_request", "The request URL is malformed.") : notFound(), "(unmatched)"),
  });
  for (const [path, list] of byPath) {
    const allow = list.map((r) => r.method).join(", ");
    h3.all(path, (event: H3Event) => {
      const method = event.req.method === "HEAD" ? "GET" : event.req.method;
      const route = list.find((r) => r.method === method);
      if (!route) {
        return answerError(app, event, new ApiError(405, "method_not_allowed", `${event.req.method} is not allowed on ${path}. Allowed: ${allow}.`, { headers: { allow } }), path);
      }
      return runRoute(app, route, event, getRouterParams(event, { decode: true }) as Record<string, string>);
    });
  }
  h3.all("/**", (event: H3Event) => answerError(app, event, notFound(), "(unmatched)"));
  return h3;
}
