import type { Command } from "commander";
import { byOperator } from "../../server/audit/audit-actor";
import { createMerchant, listMerchants } from "../../server/merchants/merchants";
import { writeUnit } from "../../server/unit-of-work";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { printResult } from "../output";

const COLUMNS = ["id", "short_id", "name", "created_at"];

export function registerMerchants(program: Command): void {
  const merchants = program.command("merchants").description("Create and list merchants");
  withCommonOptions(merchants.command("create").description("Create a merchant"))
    .requiredOption("--name <name>", "merchant name")
    .action((flags: DataFlags & { name: string }) =>
      withApp(flags, async (app) => {
        const merchant = await writeUnit(app.writes).commit((trx) => createMerchant(trx, flags.name, byOperator()));
        printResult(flags.json, merchant, [merchant], COLUMNS);
      }),
    );
  withCommonOptions(merchants.command("list").description("List merchants, newest first"))
    .option("--limit <n>", "how many (1-100)", "100")
    .action((flags: DataFlags & { limit: string }) =>
      withApp(flags, async (app) => {
        const page = await listMerchants(app.db, { limit: Math.min(100, Math.max(1, Number(flags.limit) || 100)) });
        printResult(flags.json, page, page.data, COLUMNS);
      }),
    );
}
