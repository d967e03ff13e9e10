import type { z } from "zod";
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
export interface RouteRequest<B = Record<string, unknown>> {
  requestId: string;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body as the route's `body` schema parsed it; else the JSON object, `{}` when the method has none. */
  body: B;
  headers: Headers;
  /** The authenticated caller; routes with `scope: null` get the anonymous actor. */
  actor: Actor;
  /** Commits the request's writes; on idempotent routes it also records the reply. */
  unit: UnitOfWork;
  /** The request's Idempotency-Key on idempotent routes. */
  idempotencyKey: string | undefined;
}

/**
 * A success answer that is not one JSON body but lasts, such as server-sent events:
 * its media type, how it is framed, and the schema of each item it carries.
 */
export interface StreamedResponse {
  mediaType: string;
  description: string;
  itemSchema: z.ZodType;
}

export const isStreamed = (response: z.ZodType | StreamedResponse): response is StreamedResponse => "mediaType" in response;

/** Error codes a route answers beyond the ones the pipeline adds (auth, body, idempotency), by status. */
export type ErrorCodes = Readonly<Partial<Record<number, readonly string[]>>>;

/**
 * A route as data: what it needs (scope, idempotency) and what it speaks (schemas) are
 * declared here; the pipeline enforces the first, the OpenAPI document is built from both,
 * so a handler only does its business.
 */
export interface Route<T = unknown, B = Record<string, unknown>> {
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
  /**
   * The route creates or changes what a test-data reset deletes (card tokens, payments,
   * refunds, events and their deliveries): `POST /v1/test_data/reset` and `paygate
   * reset` delete the merchant's test keys' idempotency records of this route, and keep
   * those of every other route (a replayed key or endpoint creation still replays).
   */
  resetWithTestData?: boolean;
  /** One line for the API reference. */
  summary: string;
  /** Parsed by the pipeline before the handler runs; a failure is the matching 400. */
  body?: z.ZodType<B>;
  /** The query parameters, for the API reference; the handler reads them with the same schema. */
  query?: z.ZodObject;
  /** Request headers the handler reads (beyond auth and Idempotency-Key), for the API reference. */
  headers?: z.ZodObject;
  /** Success answers by status: the JSON body's schema, `null` for an empty body, or a stream. */
  responses: Readonly<Record<number, z.ZodType | null | StreamedResponse>>;
  errors?: ErrorCodes;
  handle(req: RouteRequest<B>): Promise<T>;
  /**
   * Turns the handler's value into the answer. Called inside the commit on idempotent
   * routes, so the stored answer and the business write land together. An `ApiError`
   * returned here (not thrown) is an answer whose writes are kept, such as a decline.
   */
  present(value: T): Reply | ApiError;
}

/** Declares a route, keeping the handler's value type tied to `present`. */
export function route<T, B = Record<string, unknown>>(definition: Route<T, B>): Route {
  return definition as unknown as Route;
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): Reply =>
  headers ? { status, body, headers } : { status, body };
