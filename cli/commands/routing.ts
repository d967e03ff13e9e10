import type { Command } from "commander";
import { byOperator } from "../../server/audit/audit-actor";
import { writeUnit } from "../../server/unit-of-work";
import { parse } from "../../server/http/validate";
import { getMerchantRouting, setMerchantRouting } from "../../server/routing/routing";
import { putBody } from "../../server/routing/routes";
import { CONNECTOR_IDS } from "../../server/connectors/registry";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { merchantOptions, operatorActor, type MerchantFlags } from "../operator";
import { printResult } from "../output";

const COLUMNS = ["mode", "connectors", "updated_at"];

export function registerRouting(program: Command): void {
  const routing = program.command("routing").description("A merchant's connector order for new payments (per mode)");
  merchantOptions(withCommonOptions(routing.command("get").description("Show the connector order")))
    .action((flags: DataFlags & MerchantFlags) =>
      withApp(flags, async (app) => {
        const actor = await operatorActor(app, flags);
        const value = await getMerchantRouting(app.db, actor.merchantId, actor.mode);
        printResult(flags.json, value, [value], COLUMNS);
      }),
    );
  merchantOptions(withCommonOptions(routing.command("set").description("Set the connector order")))
    .requiredOption("--connectors <list>", `comma-separated, first tried first: ${CONNECTOR_IDS.join(", ")} (empty to clear)`)
    .action((flags: DataFlags & MerchantFlags & { connectors: string }) =>
      withApp(flags, async (app) => {
        const { connectors } = parse(putBody, { connectors: flags.connectors.split(",").map((s) => s.trim()).filter(Boolean) });
        const actor = await operatorActor(app, flags);
        const value = await writeUnit(app.writes).commit((trx) => setMerchantRouting(trx, actor.merchantId, actor.mode, connectors, byOperator()));
        printResult(flags.json, value, [value], COLUMNS);
      }),
    );
}
