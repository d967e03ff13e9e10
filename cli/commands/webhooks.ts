import type { Command } from "commander";
import { byOperator } from "../../server/audit/audit-actor";
import { toPage } from "../../server/pagination";
import { writeUnit } from "../../server/unit-of-work";
import { replayDeliveries, type ReplaySelection } from "../../server/webhooks/replay";
import { listDeliveries } from "../../store/webhooks";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { UsageError } from "../exit";
import { printResult } from "../output";

const LIST_COLUMNS = ["id", "merchant", "event_id", "type", "endpoint_url", "status", "attempts", "last_status_code", "last_error", "next_attempt_at"];
const REPLAY_COLUMNS = ["id", "event_id", "endpoint_id"];

interface ListFlags extends DataFlags {
  dead?: boolean;
  limit: string;
}

interface ReplayFlags extends DataFlags {
  dead?: boolean;
  since?: string;
}

function parseLimit(text: string): number {
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit must be a positive integer");
  return limit;
}

/** `replay <event_id…>` or `replay --dead [--since T]`, never both. */
function replaySelection(eventIds: string[], flags: ReplayFlags): ReplaySelection {
  if (flags.dead && eventIds.length > 0) throw new UsageError("give event ids or --dead, not both");
  if (!flags.dead && eventIds.length === 0) throw new UsageError("give the event ids to replay, or --dead for every dead delivery");
  if (flags.since !== undefined && !flags.dead) throw new UsageError("--since goes with --dead");
  if (!flags.dead) return { eventIds };
  if (flags.since === undefined) return { dead: true };
  const since = new Date(flags.since);
  if (Number.isNaN(since.getTime())) throw new UsageError(`--since "${flags.since}" is not an ISO 8601 time such as 2026-04-28T10:00:00Z`);
  return { dead: true, since: since.toISOString() };
}

export function registerWebhooks(program: Command): void {
  const webhooks = program.command("webhooks").description("Inspect webhook deliveries and replay them");
  withCommonOptions(webhooks.command("list").description("List webhook deliveries of every merchant, newest first"))
    .option("--dead", "only dead deliveries (the dead letter queue)")
    .option("--limit <n>", "at most this many deliveries", "100")
    .action((flags: ListFlags) => {
      const limit = parseLimit(flags.limit);
      return withApp(flags, async (app) => {
        const rows = await listDeliveries(app.db, { deadOnly: flags.dead === true, limit: limit + 1 });
        const page = toPage(rows, limit, (row) => ({ ...row, next_attempt_at: row.next_attempt_at === null ? null : new Date(row.next_attempt_at).toISOString() }));
        printResult(flags.json, page, page.data, LIST_COLUMNS);
      });
    });
  withCommonOptions(
    webhooks
      .command("replay")
      .description("Queue deliveries again, due now; a running `paygate serve` on this data dir sends them within a second"),
  )
    .argument("[event_ids...]", "events (evt_…) to deliver again to every endpoint subscribed now")
    .option("--dead", "instead, every dead delivery (the dead letter queue)")
    .option("--since <time>", "with --dead: only deliveries dead-lettered at or after this ISO 8601 time")
    .action((eventIds: string[], flags: ReplayFlags) => {
      const selection = replaySelection(eventIds, flags);
      return withApp(flags, async (app) => {
        const replayed = await writeUnit(app.writes).commit((trx) => replayDeliveries(trx, selection, byOperator()));
        if (!flags.json) process.stderr.write(`${replayed.length} deliveries queued.\n`);
        printResult(flags.json, { object: "list", data: replayed }, replayed, REPLAY_COLUMNS);
      });
    });
}
