import type { Command } from "commander";
import { listAudit } from "../../server/audit/audit-log";
import { getMerchant } from "../../server/merchants/merchants";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { UsageError } from "../exit";
import { printResult } from "../output";

const COLUMNS = ["created_at", "actor", "action", "target", "merchant_id"];

interface AuditFlags extends DataFlags {
  since?: string;
  merchant?: string;
  limit: string;
}

export function registerAudit(program: Command): void {
  const audit = program.command("audit").description("The audit log: who changed what (append-only)");
  withCommonOptions(audit.command("list").description("List audit records, newest first"))
    .option("--since <time>", "only records at or after this ISO 8601 time")
    .option("--merchant <id>", "only this merchant's records (UUID or mrc_ short id)")
    .option("--limit <n>", "how many (1-100)", "100")
    .action((flags: AuditFlags) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError("--limit must be an integer from 1 to 100");
      const since = flags.since === undefined ? undefined : new Date(flags.since);
      if (since && Number.isNaN(since.getTime())) throw new UsageError(`--since "${flags.since}" is not an ISO 8601 time such as 2026-04-28T10:00:00Z`);
      return withApp(flags, async (app) => {
        const merchantId = flags.merchant === undefined ? undefined : (await getMerchant(app.db, flags.merchant)).id;
        const page = await listAudit(app.db, { limit, since: since?.toISOString(), merchantId });
        const rows = page.data.map((r) => ({ ...r, target: `${r.target.type}:${r.target.id}` }));
        printResult(flags.json, page, rows, COLUMNS);
      });
    });
}
