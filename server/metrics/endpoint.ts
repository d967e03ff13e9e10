import type { H3, H3Event } from "h3";
import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { clientAddress } from "../http/client-address";
import { answerError, asApiError, logRequest, toResponse } from "../http/pipeline";
import { requestIdFor } from "../http/request-id";
import { metricsRefusal } from "./access";

export const METRICS_PATH = "/metrics";

/**
 * `GET /metrics`, beside the route table rather than in it: the answer is Prometheus
 * text, not JSON, and it is guarded by the peer address or its own token, not an API
 * key. Errors still leave in the API's envelope; other methods answer 405 like any route.
 */
export function serveMetrics(h3: H3, app: AppContext): void {
  app.metrics.collectProcessMetrics();
  h3.all(METRICS_PATH, async (event: H3Event) => {
    if (event.req.method !== "GET" && event.req.method !== "HEAD") {
      return answerError(app, event, new ApiError(405, "method_not_allowed", `${event.req.method} is not allowed on ${METRICS_PATH}. Allowed: GET.`, { headers: { allow: "GET" } }), METRICS_PATH);
    }
    // Behind a trusted proxy the client is the forwarded address, not the (local) proxy.
    const client = clientAddress(event, app.config.trustProxy, app.config.tls ? "https" : "http");
    const refusal = metricsRefusal(client.ip, event.req.headers.get("authorization"), app.config.metricsToken);
    if (refusal) return answerError(app, event, refusal, METRICS_PATH);
    const started = performance.now();
    const requestId = requestIdFor(event.req.headers.get("x-request-id"));
    let reply;
    try {
      const { contentType, body } = await app.metrics.scrape();
      reply = { status: 200, headers: { "content-type": contentType }, body };
    } catch (error) {
      return answerError(app, event, asApiError(app, error, requestId), METRICS_PATH);
    }
    logRequest(app, event, METRICS_PATH, requestId, reply.status, started);
    return toResponse(reply, requestId);
  });
}
