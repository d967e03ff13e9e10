import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { getMerchant } from "../../server/merchants/merchants";
import { resetTestData } from "../../server/test-data/reset";
import { writeUnit } from "../../server/unit-of-work";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { OperationError } from "../exit";
import { printResult } from "../output";

interface ResetFlags extends DataFlags {
  merchant: string;
  yes?: boolean;
}

/** Asks on the terminal; without one, nobody can answer, so the answer is no. */
async function confirmed(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new OperationError("reset deletes data: confirm with --yes (no terminal to ask on)");
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

export function registerReset(program: Command): void {
  withCommonOptions(
    program
      .command("reset")
      .description("Delete a merchant's test-mode payments, refunds, tokens, events and deliveries; never live data, keys or accounts"),
  )
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .option("--yes", "do not ask for confirmation")
    .action((flags: ResetFlags) =>
      withApp(flags, async (app) => {
        const merchant = await getMerchant(app.db, flags.merchant);
        if (!flags.yes && !(await confirmed(`Delete every test-mode payment, token and event of ${merchant.short_id} (${merchant.name})? [y/N] `))) {
          throw new OperationError("nothing deleted");
        }
        const { routeTable } = await import("../../server/openapi/route-table");
        const table = routeTable();
        const result = await writeUnit(app.writes).commit((trx) => resetTestData(trx, merchant.id, table));
        const rows = Object.entries(result.deleted).map(([kind, deleted]) => ({ kind, deleted }));
        printResult(flags.json, result, rows, ["kind", "deleted"]);
      }),
    );
}
