import type { Command } from "commander";
import { EVENT_TYPES } from "../../server/events/event";
import { UsageError } from "../exit";
import { printResult } from "../output";
import { call, resolveRemote, withRemoteOptions, type RemoteFlags } from "../http-client";

interface ListFlags extends RemoteFlags {
  type?: string;
  limit: string;
}

interface ResendFlags extends RemoteFlags {
  endpoint?: string;
}

interface EventSummary {
  id: string;
  type: string;
  created_at: string;
  data: { id?: string };
}

interface Delivery {
  id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
}

const summary = (e: EventSummary) => ({ id: e.id, type: e.type, created_at: e.created_at, payment_id: e.data.id ?? null });
const EVENT_COLUMNS = ["id", "type", "created_at", "payment_id"];
const DELIVERY_COLUMNS = ["id", "endpoint_id", "status", "attempts"];

export function registerEvents(program: Command): void {
  const events = program.command("events").description("The merchant's events on a running server (over HTTP)");
  withRemoteOptions(events.command("list").description("List events, newest first"))
    .option("--type <type>", `only this type (${EVENT_TYPES.join(", ")})`)
    .option("--limit <n>", "at most this many events (1-100)", "10")
    .action(async (flags: ListFlags) => {
      const query = new URLSearchParams({ limit: flags.limit });
      if (flags.type !== undefined) query.set("type", flags.type);
      const page = await call<{ data: EventSummary[] }>(resolveRemote(flags), "GET", `/v1/events?${query}`);
      printResult(flags.json, page, page.data.map(summary), EVENT_COLUMNS);
    });
  withRemoteOptions(events.command("get").description("Show one event and its deliveries"))
    .argument("<event_id>")
    .action(async (id: string, flags: RemoteFlags) => {
      const event = await call<EventSummary & { deliveries?: Delivery[] }>(resolveRemote(flags), "GET", `/v1/events/${encodeURIComponent(id)}`);
      if (flags.json) return printResult(true, event, [], []);
      process.stdout.write(`${JSON.stringify(event, null, 2)}\n`);
    });
  withRemoteOptions(events.command("resend").description("Deliver an event again, now, to every subscribed endpoint or one"))
    .argument("<event_id>")
    .option("--endpoint <id>", "only this webhook endpoint (we_…)")
    .action(async (id: string, flags: ResendFlags) => {
      if (!id.startsWith("evt_")) throw new UsageError(`"${id}" is not an event id (evt_…)`);
      const body = flags.endpoint === undefined ? {} : { endpoint: flags.endpoint };
      const event = await call<EventSummary & { deliveries?: Delivery[] }>(resolveRemote(flags), "POST", `/v1/events/${encodeURIComponent(id)}/replay`, body);
      const deliveries = (event.deliveries ?? []).filter((d) => flags.endpoint === undefined || d.endpoint_id === flags.endpoint);
      if (!flags.json) process.stderr.write(`${deliveries.length} deliveries queued.\n`);
      printResult(flags.json, event, deliveries, DELIVERY_COLUMNS);
    });
}
