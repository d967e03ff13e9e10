import { z } from "zod";
import { json, route, type Route } from "../http/route";
import { OPENAPI_PATH, openApiDocument, type OpenApiDocument } from "./document";

/** `GET /v1/openapi.json`: the API reference of `table` (which includes this route), built once. */
export function openApiRoutes(table: readonly Route[]): Route[] {
  let document: OpenApiDocument | undefined;
  return [
    route({
      method: "GET",
      path: OPENAPI_PATH,
      scope: null,
      summary: "This API reference, as an OpenAPI 3.1 document",
      responses: { 200: z.looseObject({ openapi: z.string(), info: z.object({ title: z.string(), version: z.string() }).loose(), paths: z.record(z.string(), z.unknown()) }) },
      handle: async () => (document ??= openApiDocument(table)),
      present: (body) => json(200, body),
    }),
  ];
}
