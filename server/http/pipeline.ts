import type { H3Event } from "h3";
import { FastResponse } from "srvx";
import type { AppContext } from "../app-context";
import { devRequestRefusal } from "../dev-mode";
import { ApiError, errors } from "../errors";
import { ANONYMOUS, type Actor } from "../keys/actor";
import { requireScope } from "../keys/authenticator";
import { WrongMasterKeyError } from "../secrets/cipher";
import { isDatabaseUnavailable } from "../../store/db-errors";
import { writeUnit, type UnitOfWork } from "../unit-of-work";
import { errorBody } from "./error-envelope";
import { clientAddress } from "./client-address";
import { beginIdempotent, fingerprint, idempotencyKeyFrom, scopePath, type IdempotencySession } from "./idempotency";
import { readJsonObject } from "./json-body";
import { enforceRateLimit } from "./rate-limit";
import { refuseNul } from "./refuse-nul";
import { requestIdFor } from "./request-id";
import type { Reply, Route } from "./route";
import { parse } from "./validate";

/** A reply rendered to bytes: what is sent, and what idempotency stores and replays. */
export interface RenderedReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  stream?: ReadableStream<Uint8Array>;
}

export function render(outcome: Reply | ApiError, requestId: string): RenderedReply {
  if (outcome instanceof ApiError) {
    return {
      status: outcome.status,
      headers: { "content-type": "application/json", ...outcome.details.headers },
      body: JSON.stringify(errorBody(outcome, requestId)),
    };
  }
  const headers = { ...outcome.headers };
  if (outcome.stream) return { status: outcome.status, headers, body: "", stream: outcome.stream };
  if (outcome.body === undefined) return { status: outcome.status, headers, body: "" };
  headers["content-type"] = "application/json";
  return { status: outcome.status, headers, body: JSON.stringify(outcome.body) };
}

/**
 * Sent on every answer, replays included: API answers carry keys, card data and
 * secrets that no shared or browser cache may keep, and no browser may sniff them
 * into something executable.
 */
const SECURITY_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const;

/**
 * srvx's FastResponse with plain-object headers: h3 passes it through as it is, and
 * srvx writes it to Node from that object. h3's own HTTPResponse would be turned into
 * a web `Headers` first (about 4% of a GET's CPU in a profile), and a plain web
 * Response streamed through web streams.
 */
export function toResponse(reply: RenderedReply, requestId: string): Response {
  const headers = { ...reply.headers, ...SECURITY_HEADERS, "x-request-id": requestId };
  return new FastResponse(reply.stream ?? (reply.status === 204 ? null : reply.body), { status: reply.status, headers });
}

/**
 * Anything not an ApiError is a bug: logged in full, answered with a generic 500.
 * Except a decryption failure (wrong master key, altered ciphertext): the operator's
 * to fix, and no fault of the caller's, so 503 `master_key_mismatch`. And a database
 * that cannot take the request now (down, locked past the busy timeout): 503
 * `service_unavailable`, which the caller retries.
 */
export function asApiError(app: AppContext, error: unknown, requestId: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof WrongMasterKeyError) {
    app.log.error({ request_id: requestId, reason: error.message }, "stored data cannot be decrypted");
    return errors.masterKeyMismatch();
  }
  if (isDatabaseUnavailable(error)) {
    app.log.warn({ err: error, request_id: requestId }, "database unavailable");
    return errors.serviceUnavailable();
  }
  app.log.error({ err: error, request_id: requestId }, "unhandled error");
  return errors.internal();
}

/** Logs one line per request; never the headers or the body. */
export function logRequest(app: AppContext, event: H3Event, routePath: string, requestId: string, status: number, started: number, merchant?: string): void {
  app.metrics.request(routePath, event.req.method, status, (performance.now() - started) / 1000);
  const client = clientAddress(event, app.config.trustProxy, app.config.tls ? "https" : "http");
  app.requestLog.info(
    {
      request_id: requestId,
      client_ip: client.ip,
      scheme: client.scheme,
      method: event.req.method,
      route: routePath,
      status,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      ...(merchant && { merchant }),
    },
    "request",
  );
}

/**
 * The answer as the idempotency record keeps it: without the route's secret fields,
 * with the request id it was sent under (a replay answers with that one).
 */
function forStorage(route: Route, reply: RenderedReply, requestId: string): RenderedReply {
  const stored = { ...reply, headers: { ...reply.headers, "x-request-id": requestId } };
  if (!route.secretFields || reply.status >= 400 || reply.body === "") return stored;
  const body = JSON.parse(reply.body) as Record<string, unknown>;
  for (const field of route.secretFields) delete body[field];
  return { ...stored, body: JSON.stringify(body) };
}

/** Whether the pipeline reads a JSON body for the route. */
export const takesBody = (route: Route): boolean => route.method !== "GET" && route.method !== "DELETE";

export function isIdempotent(route: Route): boolean {
  return route.idempotent ?? route.method === "POST";
}

/**
 * Runs one request through everything a route declared, in this order: request id,
 * authentication and scope, rate limit, body, the refusal of NUL in any text (refuse-nul.ts), then `runAs` (idempotency, body schema,
 * handler, rendering), log. Every answer, error or not, leaves through here.
 */
export async function runRoute(app: AppContext, route: Route, event: H3Event, params: Record<string, string>): Promise<Response> {
  const started = performance.now();
  const headers = event.req.headers;
  const requestId = requestIdFor(headers.get("x-request-id"));
  let actor: Actor = ANONYMOUS;
  let answer: { reply: RenderedReply; requestId: string };
  try {
    if (app.config.devMode) {
      const refusal = devRequestRefusal(route.method, headers);
      if (refusal) throw refusal;
    }
    if (route.scope) {
      actor = await app.auth.authenticate(headers.get("authorization"));
      requireScope(actor, route.scope);
      enforceRateLimit(app, actor);
    }
    const body = takesBody(route) ? await readJsonObject(event) : {};
    refuseNul({ params, query: event.url.searchParams, body });
    answer = await runAs(app, route, actor, { requestId, params, query: event.url.searchParams, body, headers });
  } catch (error) {
    answer = { reply: render(asApiError(app, error, requestId), requestId), requestId };
  }
  logRequest(app, event, route.path, requestId, answer.reply.status, started, actor.merchantShortId);
  return toResponse(answer.reply, answer.requestId);
}

/** A route's input once the caller is known: what `runAs` needs besides the actor. */
export interface RouteCall {
  requestId: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  headers: Headers;
}

/**
 * The part of a request after authentication, scope and rate limit: idempotency, body
 * schema, handler, rendering. The dashboard runs the API's routes through here too, so
 * a session's action obeys the very rules of the API call it stands for. Answers with
 * the request id to send: a replay's is the one it was first sent under.
 */
export async function runAs(app: AppContext, route: Route, actor: Actor, call: RouteCall): Promise<{ reply: RenderedReply; requestId: string }> {
  const { requestId, params, body, headers } = call;
  let session: IdempotencySession | undefined;
  let rendered: RenderedReply;
  let errorCode: string | undefined;
  try {
    let unit: UnitOfWork = writeUnit(app.writes);
    let idempotencyKey: string | undefined;
    if (isIdempotent(route)) {
      const method = route.method;
      const path = scopePath(route.path, params);
      idempotencyKey = idempotencyKeyFrom(headers);
      const scope = { apiKeyId: actor.apiKeyId, method, path, key: idempotencyKey };
      const begun = await beginIdempotent(app, scope, fingerprint(app.fingerprintKey, method, path, body, headers.get("x-connector-account")));
      if ("replay" in begun) {
        // The original request id, so an error body's request_id and the header agree.
        const { "x-request-id": originalId = requestId, ...stored } = begun.replay.headers;
        return { reply: { ...begun.replay, headers: { ...stored, "idempotent-replayed": "true" } }, requestId: originalId };
      }
      session = begun.session;
      unit = session.unit(
        (value) => render(route.present(value), requestId),
        (reply) => forStorage(route, reply, requestId),
      );
    }
    const input = route.body ? parse(route.body, body) : body;
    const value = await route.handle({ requestId, params, query: call.query, body: input, headers, actor, unit, idempotencyKey });
    // On idempotent routes the answer was rendered inside the commit: send that one.
    rendered = session?.committedReply ?? render(route.present(value), requestId);
  } catch (error) {
    const apiError = asApiError(app, error, requestId);
    errorCode = apiError.code;
    rendered = render(apiError, requestId);
  }
  if (session) {
    await session.finish(forStorage(route, rendered, requestId), errorCode).catch((error: unknown) => {
      app.log.error({ err: error, request_id: requestId }, "could not record the idempotent answer");
    });
  }
  return { reply: rendered, requestId };
}

/** Answers outside any route (unknown path, wrong method) in the same envelope. */
export function answerError(app: AppContext, event: H3Event, error: ApiError, routePath: string): Response {
  const started = performance.now();
  const requestId = requestIdFor(event.req.headers.get("x-request-id"));
  const rendered = render(error, requestId);
  logRequest(app, event, routePath, requestId, rendered.status, started);
  return toResponse(rendered, requestId);
}
