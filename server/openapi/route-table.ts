import type { AppContext } from "../app-context";
import type { Route } from "../http/route";
import { allRoutes } from "../server";

/**
 * The route table without a server, for printing the API reference: declarations read
 * the app context only when a handler runs, and this one refuses to be read at all.
 */
export function routeTable(): Route[] {
  const noApp = new Proxy({} as AppContext, {
    get: (_target, property) => {
      throw new Error(`route declarations must not read the app context (${String(property)}) before a request`);
    },
  });
  return allRoutes(noApp);
}
