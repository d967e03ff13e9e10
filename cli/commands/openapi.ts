import type { Command } from "commander";
import { openApiDocument } from "../../server/openapi/document";
import { routeTable } from "../../server/openapi/route-table";

/** `paygate openapi`: the document `GET /v1/openapi.json` serves, without a server or a database. */
export function registerOpenApi(program: Command): void {
  program
    .command("openapi")
    .description("Print the API reference (OpenAPI 3.1, JSON), the same document GET /v1/openapi.json serves")
    .action(() => {
      process.stdout.write(`${JSON.stringify(openApiDocument(routeTable()), null, 2)}\n`);
    });
}
