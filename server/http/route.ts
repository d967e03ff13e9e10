import type { ApiError } from "../errors";
import type { UnitOfWork } from "../unit-of-work";
import type { Actor } from "../keys/actor";
import type { Scope } from "../keys/scopes";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** A successful HTTP answer; errors are `ApiError`s, thrown or returned. */
export interface Reply {
  status: number;
  /** Serialized as JSON; absent for 204. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as the body instead, for answers that last (server-sent events); never stored. */
  stream?: ReadableStream<Uint8Array>;
}

/** What a route handler gets: the parsed request, who is calling, and how to commit. */
export interface RouteRequest {
  requestId: string;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The JSON object body; `{}` when the method has none. */
  body: Record<string, unknown>;
  headers: Headers;
  /** The authenticated caller; routes with `scope: null` get the anonymous actor. */
  actor: Actor;
  /** Commits the request's writes; on idempotent routes it also records the reply. */
  unit: UnitOfWork;
  /** The request's Idempotency-Key on idempotent routes. */
  idempotencyKey: string | undefined;
}

/**
 * A route as data: what it needs (scope, idempotency) is declared here and enforced by
 * the pipeline, so a handler only does its business.
 */
export interface Route<T = unknown> {
  method: Method;
  /** h3 path pattern, e.g. `/v1/payments/:id`. */
  path: string;
  /** Scope the caller's key must hold; `null` for public routes (health). */
  scope: Scope | null;
  /** Requires `Idempotency-Key` and replays stored answers. Default: true for POST. */
  idempotent?: boolean;
  /**
   * Top-level body fields that must never be stored (a key's plaintext, a signing
   * secret): they are removed from the idempotency record, so a replay answers
   * without them.
   */
  secretFields?: readonly string[];
  handle(req: RouteRequest): Promise<T>;
  /**
   * Turns the handler's value into the answer. Called inside the commit on idempotent
   * routes, so the stored answer and the business write land together. An `ApiError`
   * returned here (not thrown) is an answer whose writes are kept, such as a decline.
   */
  present(value: T): Reply | ApiError;
}

/** Declares a route, keeping the handler's value type tied to `present`. */
export function route<T>(definition: Route<T>): Route {
  return definition as unknown as Route;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): Reply =>
  headers ? { status, body, headers } : { status, body };
