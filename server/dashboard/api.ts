import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { requireScope } from "../keys/authenticator";
import type { Actor } from "../keys/actor";
import { enforceRateLimit } from "../http/rate-limit";
import { render, runAs } from "../http/pipeline";
import type { Method, Route } from "../http/route";

/** What an API route answered the dashboard: its status and parsed JSON body. */
export interface ApiAnswer<T = any> {
  status: number;
  ok: boolean;
  body: T;
}

/**
 * The dashboard acts only by calling the API's own routes with the session's actor:
 * the same scope check, rate limit, idempotency, validation and services as a request
 * with the key itself, so a session can do exactly what its key can do.
 */
export class ApiClient {
  private readonly byKey = new Map<string, Route>();

  constructor(
    private readonly app: AppContext,
    routes: readonly Route[],
  ) {
    for (const route of routes) this.byKey.set(`${route.method} ${route.path}`, route);
  }

  /**
   * Calls `method pattern` (e.g. `POST /v1/payments/refund`) with `params` filled in.
   * Writes carry `idempotencyKey`, minted when the form was drawn, so a form sent
   * twice is answered once.
   */
  async call<T = any>(
    actor: Actor,
    method: Method,
    pattern: string,
    options: { params?: Record<string, string>; query?: Record<string, string | undefined>; body?: Record<string, unknown>; idempotencyKey?: string; requestId: string },
  ): Promise<ApiAnswer<T>> {
    const route = this.byKey.get(`${method} ${pattern}`);
    if (!route) throw new Error(`the dashboard calls an unknown route ${method} ${pattern}`);
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== "") query.set(name, value);
    const headers = new Headers(options.idempotencyKey ? { "idempotency-key": options.idempotencyKey } : {});
    let reply;
    try {
      if (route.scope) {
        requireScope(actor, route.scope);
        enforceRateLimit(this.app, actor);
      }
      ({ reply } = await runAs(this.app, route, actor, { requestId: options.requestId, params: options.params ?? {}, query, body: options.body ?? {}, headers }));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      reply = render(error, options.requestId);
    }
    return { status: reply.status, ok: reply.status < 400, body: (reply.body === "" ? {} : JSON.parse(reply.body)) as T };
  }
}

/** The API's error message of a failed answer, for a flash line. */
export const errorMessage = (answer: ApiAnswer): string => (answer.body as { error?: { message?: string } }).error?.message ?? `HTTP ${answer.status}`;
