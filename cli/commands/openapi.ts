import type { Command } from "commander";

/** `paygate openapi`: the document `GET /v1/openapi.json` serves, without a server or a database. */
export function registerOpenApi(program: Command): void {
  program
    .command("openapi")
    .description("Print the API reference (OpenAPI 3.1, JSON), the same document GET /v1/openapi.json serves")
    .action(async () => {
      const [{ openApiDocument }, { routeTable }] = await Promise.all([import("../../server/openapi/document"), import("../../server/openapi/route-table")]);
      process.stdout.write(`${JSON.stringify(openApiDocument(routeTable()), null, 2)}\n`);
    });
}
