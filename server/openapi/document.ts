import { z } from "zod";
import { VERSION } from "../app-context";
import { TEST_CARDS } from "../connectors/mock/test-cards";
import { errorEnvelopeSchema } from "../http/error-envelope";
import { isIdempotent, takesBody } from "../http/pipeline";
import { isStreamed, type ErrorCodes, type Route } from "../http/route";

/** Where the server publishes the document; error messages point here. */
export const OPENAPI_PATH = "/v1/openapi.json";

type Json = Record<string, unknown>;
export type OpenApiDocument = Json & { openapi: string; paths: Record<string, Record<string, Json>> };

const SCHEMAS = "#/components/schemas/";
/** Where zod puts an id'd schema that a registry holds only inside another one. */
const SHARED = "__shared";

/** `/v1/payments/:id` -> `/v1/payments/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);

/** `POST /v1/events/:id/replay` -> `postV1EventsByIdReplay`: stable, and unique as long as routes are. */
export function operationId(route: Route): string {
  const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
  const words = route.path
    .split(/[^A-Za-z0-9:]+/)
    .filter(Boolean)
    .map((part) => (part.startsWith(":") ? `By${capital(part.slice(1))}` : capital(part)));
  return route.method.toLowerCase() + words.join("");
}

const add = (codes: Record<number, string[]>, status: number, ...list: string[]) => {
  codes[status] = [...new Set([...(codes[status] ?? []), ...list])];
};

/**
 * Every error a route can answer: what the pipeline adds from the route's declaration
 * (development mode, auth, body, schemas, idempotency), then what the route declares.
 */
function errorCodes(route: Route): Record<number, string[]> {
  const codes: Record<number, string[]> = {};
  add(codes, 403, "host_not_allowed", "origin_not_allowed");
  add(codes, 500, "api_error");
  add(codes, 503, "master_key_mismatch", "service_unavailable");
  // Any route: a NUL in a path parameter or query value (http/refuse-nul.ts).
  add(codes, 400, "parameter_invalid");
  if (route.scope) {
    add(codes, 401, "authentication_required", "invalid_api_key");
    add(codes, 403, "insufficient_permissions");
    add(codes, 429, "rate_limit_exceeded");
  }
  if (takesBody(route)) {
    add(codes, 400, "invalid_json", "parameter_invalid");
    add(codes, 413, "payload_too_large");
    add(codes, 415, "unsupported_media_type");
  }
  if (route.body || route.query) add(codes, 400, "parameter_missing", "parameter_invalid", "parameter_unknown");
  if (isIdempotent(route)) {
    add(codes, 400, "missing_idempotency_key", "parameter_invalid");
    add(codes, 409, "idempotency_conflict");
    add(codes, 422, "idempotency_param_mismatch");
  }
  for (const [status, list] of Object.entries(route.errors ?? ({} as ErrorCodes))) add(codes, Number(status), ...(list ?? []));
  return codes;
}

/**
 * Schemas become components: a schema with a zod `id` (`.meta({ id: "Payment" })`) under
 * that name, any other under the name of the place it is first used.
 */
class ComponentSet {
  private readonly registry = z.registry<{ id: string }>();
  private readonly names = new Map<z.ZodType, string>();

  constructor(private readonly io: "input" | "output") {}

  ref(schema: z.ZodType, fallback: string): Json {
    let name = this.names.get(schema);
    if (!name) {
      name = (z.globalRegistry.get(schema)?.id as string | undefined) ?? fallback;
      this.names.set(schema, name);
      this.registry.add(schema, { id: name });
    }
    return { $ref: SCHEMAS + name };
  }

  schemas(): Record<string, Json> {
    const { schemas } = z.toJSONSchema(this.registry, { io: this.io, uri: (id) => SCHEMAS + id });
    const out: Record<string, Json> = {};
    for (const [name, schema] of Object.entries(schemas)) {
      if (name === SHARED) Object.assign(out, (schema as Json).$defs);
      else out[name] = schema as Json;
    }
    for (const schema of Object.values(out)) {
      delete schema.$schema;
      delete schema.$id;
    }
    return JSON.parse(JSON.stringify(out).replaceAll(`${SCHEMAS}${SHARED}#/$defs/`, SCHEMAS)) as Record<string, Json>;
  }
}

const REQUEST_ID_HEADER = { "X-Request-Id": { $ref: "#/components/headers/RequestId" } };

function parametersOf(place: "query" | "header", object: z.ZodObject): Json[] {
  const schema = z.toJSONSchema(object, { io: "input" }) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: place, required: schema.required?.includes(name) ?? false, schema: rest, ...(description !== undefined && { description }) };
  });
}

function errorResponse(codes: string[]): Json {
  return {
    description: `Error codes: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
    headers: REQUEST_ID_HEADER,
    content: {
      "application/json": {
        schema: { allOf: [{ $ref: `${SCHEMAS}Error` }, { type: "object", properties: { error: { type: "object", properties: { code: { enum: codes } } } } }] },
      },
    },
  };
}

function operation(route: Route, requests: ComponentSet, responses: ComponentSet): Json {
  const id = operationId(route);
  const parameters: Json[] = [
    ...pathParams(route.path).map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
    ...(route.query ? parametersOf("query", route.query) : []),
    ...(route.headers ? parametersOf("header", route.headers) : []),
  ];
  if (isIdempotent(route)) {
    parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
  }
  const answers: Record<string, Json> = {};
  for (const [status, schema] of Object.entries(route.responses)) {
    answers[status] = { description: schema ? "Success." : "Success, no body.", headers: REQUEST_ID_HEADER };
    if (schema && isStreamed(schema)) {
      answers[status] = {
        description: schema.description,
        headers: REQUEST_ID_HEADER,
        // OpenAPI 3.1 cannot describe a stream's items; `x-itemSchema` is OpenAPI 3.2's `itemSchema`.
        content: { [schema.mediaType]: { schema: { type: "string" }, "x-itemSchema": responses.ref(schema.itemSchema, `${id}Item${status}`) } },
      };
    } else if (schema) {
      answers[status] = { ...answers[status], content: { "application/json": { schema: responses.ref(schema, `${id}Response${status}`) } } };
    }
  }
  for (const [status, codes] of Object.entries(errorCodes(route))) answers[status] = errorResponse(codes);
  return {
    operationId: id,
    summary: route.summary,
    tags: [route.path.split("/").find((part) => part && part !== "v1") ?? "api"],
    ...(route.scope ? { description: `Requires an API key with the \`${route.scope}\` scope.`, "x-paygate-scope": route.scope } : { security: [] }),
    ...(parameters.length > 0 && { parameters }),
    ...(route.body && { requestBody: { required: true, content: { "application/json": { schema: requests.ref(route.body, `${id}Body`) } } } }),
    responses: answers,
  };
}

/** The OpenAPI 3.1 document of `routes`, built only from their declarations. */
export function openApiDocument(routes: readonly Route[]): OpenApiDocument {
  const requests = new ComponentSet("input");
  const responses = new ComponentSet("output");
  responses.ref(errorEnvelopeSchema, "Error");
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, requests, responses) };
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "paygate",
      version: VERSION,
      description: [
        "A self-hostable payment gateway. Every answer, error or not, carries X-Request-Id; errors use the one envelope `Error`.",
        "Reading events (`/v1/events…`) takes `payments:read` besides the webhooks scope: events carry the payment.",
        "",
        "Test mode accepts only these cards (any future expiry, any CVC, any 5-digit ZIP); the number decides what the built-in mock connector does:",
        "",
        "| card | outcome |",
        "|---|---|",
        ...TEST_CARDS.map((card) => `| ${card.number} | ${card.outcome} |`),
      ].join("\n"),
    },
    security: [{ apiKey: [] }],
    paths,
    components: {
      schemas: { ...requests.schemas(), ...responses.schemas() },
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description: "An API key: `Authorization: Bearer sk_test_…` (secret), `pk_…` (publishable, tokens only), or an admin key. Each route names the scope it needs.",
        },
      },
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: true,
          description: "Any unique string up to 255 printable ASCII characters. A retry with the same key and body replays the stored answer (with `Idempotent-Replayed: true`).",
          schema: { type: "string", minLength: 1, maxLength: 255 },
        },
      },
      headers: {
        RequestId: { description: "The request's id, also in error bodies and logs.", schema: { type: "string" } },
      },
    },
  };
}
