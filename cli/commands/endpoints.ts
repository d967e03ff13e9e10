import type { Command } from "commander";
import { byOperator } from "../../server/audit/audit-actor";
import { parse } from "../../server/http/validate";
import { listParams } from "../../server/pagination";
import { writeUnit } from "../../server/unit-of-work";
import { createEndpoint, deleteEndpoint, listEndpoints, updateEndpoint } from "../../server/webhooks/endpoints";
import { createBody, testBody, updateBody } from "../../server/webhooks/routes";
import { sendTestDelivery } from "../../server/webhooks/test-delivery";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { merchantOptions, operatorActor, type MerchantFlags } from "../operator";
import { printResult } from "../output";

const COLUMNS = ["id", "url", "event_types", "status", "description", "created_at"];

type Flags = DataFlags & MerchantFlags;

interface EndpointFlags extends Flags {
  url?: string;
  events?: string;
  description?: string;
  status?: string;
}

const eventList = (text: string | undefined) => (text === undefined ? undefined : text.split(",").map((s) => s.trim()).filter(Boolean));

export function registerEndpoints(program: Command): void {
  const endpoints = program.command("endpoints").description("Manage a merchant's webhook endpoints");
  merchantOptions(withCommonOptions(endpoints.command("list").description("List webhook endpoints")))
    .option("--limit <n>", "how many (1-100)", "100")
    .action((flags: Flags & { limit: string }) =>
      withApp(flags, async (app) => {
        const page = await listEndpoints(app.db, await operatorActor(app, flags), listParams(new URLSearchParams({ limit: flags.limit })));
        printResult(flags.json, page, page.data, COLUMNS);
      }),
    );
  merchantOptions(withCommonOptions(endpoints.command("create").description("Add an endpoint; prints its signing secret once")))
    .requiredOption("--url <url>", "where to POST events")
    .requiredOption("--events <types>", 'comma-separated event types, or "*" for all')
    .option("--description <text>", "a note for people")
    .action((flags: EndpointFlags) =>
      withApp(flags, async (app) => {
        const input = parse(createBody, { url: flags.url, event_types: eventList(flags.events), ...(flags.description !== undefined && { description: flags.description }) });
        const actor = await operatorActor(app, flags);
        const endpoint = await writeUnit(app.writes).commit((trx) => createEndpoint(trx, app.cipher, actor, input, app.targets, byOperator()));
        printResult(flags.json, endpoint, [endpoint], [...COLUMNS, "secret"]);
      }),
    );
  merchantOptions(withCommonOptions(endpoints.command("update").description("Change an endpoint's url, event types, description or status")))
    .argument("<endpoint>", "the endpoint's id (we_…)")
    .option("--url <url>", "new url")
    .option("--events <types>", "new comma-separated event types")
    .option("--description <text>", "new description")
    .option("--status <status>", "enabled or disabled")
    .action((id: string, flags: EndpointFlags) =>
      withApp(flags, async (app) => {
        const patch = parse(updateBody, {
          ...(flags.url !== undefined && { url: flags.url }),
          ...(flags.events !== undefined && { event_types: eventList(flags.events) }),
          ...(flags.description !== undefined && { description: flags.description }),
          ...(flags.status !== undefined && { status: flags.status }),
        });
        const actor = await operatorActor(app, flags);
        const endpoint = await writeUnit(app.writes).commit((trx) => updateEndpoint(trx, actor, id, patch, app.targets, byOperator()));
        printResult(flags.json, endpoint, [endpoint], COLUMNS);
      }),
    );
  merchantOptions(withCommonOptions(endpoints.command("delete").description("Delete an endpoint; its pending deliveries stop")))
    .argument("<endpoint>", "the endpoint's id (we_…)")
    .action((id: string, flags: Flags) =>
      withApp(flags, async (app) => {
        const actor = await operatorActor(app, flags);
        const deleted = await writeUnit(app.writes).commit((trx) => deleteEndpoint(trx, actor, id, byOperator()));
        if (flags.json) process.stdout.write(`${JSON.stringify(deleted)}\n`);
        else process.stdout.write(`deleted ${deleted.id}\n`);
      }),
    );
  merchantOptions(withCommonOptions(endpoints.command("test").description("Send a sample event to an endpoint now and show the answer")))
    .argument("<endpoint>", "the endpoint's id (we_…)")
    .option("--event-type <type>", "the sample event's type")
    .action((id: string, flags: Flags & { eventType?: string }) =>
      withApp(flags, async (app) => {
        const { event_type } = parse(testBody, flags.eventType === undefined ? {} : { event_type: flags.eventType });
        const result = await sendTestDelivery(app, await operatorActor(app, flags), id, event_type);
        printResult(flags.json, result, [result], ["delivered", "status_code", "duration_ms", "error", "event_id"]);
        if (!result.delivered) process.exitCode = 1;
      }),
    );
}
