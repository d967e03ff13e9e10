import type { Command } from "commander";
import { followOn } from "../../server/payments/follow-on";
import { captureBody, refundBody, voidBody } from "../../server/payments/payment-input";
import { getPayment, listPayments } from "../../server/payments/retrieve";
import type { FollowOn } from "../../server/payments/state-machine";
import { parse } from "../../server/http/validate";
import { listParams } from "../../server/pagination";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { UsageError } from "../exit";
import { idempotencyKeyOf, idempotentWrite, merchantOptions, operatorActor, type MerchantFlags } from "../operator";
import { printResult } from "../output";

const COLUMNS = ["id", "status", "amount", "amount_captured", "amount_refunded", "currency", "connector_id", "created_at"];

type Flags = DataFlags & MerchantFlags;

interface FollowOnFlags extends Flags {
  amount?: string;
  reason?: string;
  connectorAccount?: string;
  idempotencyKey?: string;
}

function amountOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const amount = Number(text);
  if (!Number.isInteger(amount)) throw new UsageError("--amount must be an integer in the currency's minor unit (cents)");
  return amount;
}

export function registerPayments(program: Command): void {
  const payments = program.command("payments").description("Look up a merchant's payments; capture, refund or void them");
  merchantOptions(withCommonOptions(payments.command("list").description("List payments, newest first")))
    .option("--limit <n>", "how many (1-100)", "10")
    .option("--starting-after <id>", "the last payment of the previous page")
    .option("--status <status>", "only payments in this status")
    .action((flags: Flags & { limit: string; startingAfter?: string; status?: string }) =>
      withApp(flags, async (app) => {
        const query = new URLSearchParams({ limit: flags.limit });
        if (flags.startingAfter !== undefined) query.set("starting_after", flags.startingAfter);
        if (flags.status !== undefined) query.set("status", flags.status);
        const page = await listPayments(app.db, await operatorActor(app, flags), listParams(query), query);
        printResult(flags.json, page, page.data, COLUMNS);
      }),
    );
  merchantOptions(withCommonOptions(payments.command("get").description("Show one payment")))
    .argument("<payment>", "the payment's id")
    .action((id: string, flags: Flags) =>
      withApp(flags, async (app) => {
        const payment = await getPayment(app.db, await operatorActor(app, flags), id);
        printResult(flags.json, payment, [payment], COLUMNS);
      }),
    );
  const schemas = { capture: captureBody, refund: refundBody, void: voidBody };
  const descriptions = { capture: "Capture an authorized payment (all of it unless --amount)", refund: "Refund a captured payment (all that is left unless --amount)", void: "Release an authorization" };
  for (const operation of ["capture", "refund", "void"] as FollowOn[]) {
    const command = merchantOptions(withCommonOptions(payments.command(operation).description(descriptions[operation])))
      .argument("<payment>", "the payment's id")
      .option("--idempotency-key <key>", "makes a retry safe: the same key replays the first answer (default: a new key, printed)")
      .option("--connector-account <account>", "the payment's account, when the merchant has several (ca_ short id or label)");
    if (operation !== "void") command.option("--amount <cents>", "amount in the minor unit");
    if (operation === "refund") command.option("--reason <text>", "why, kept with the refund");
    command.action((id: string, flags: FollowOnFlags) =>
      withApp(flags, async (app) => {
        const body = {
          payment_id: id,
          ...(amountOf(flags.amount) !== undefined && { amount: amountOf(flags.amount) }),
          ...(flags.reason !== undefined && { reason: flags.reason }),
          ...(flags.connectorAccount !== undefined && { connector_account: flags.connectorAccount }),
        };
        const input = parse(schemas[operation], body);
        const actor = await operatorActor(app, flags);
        const key = idempotencyKeyOf(flags.idempotencyKey);
        const payment = await idempotentWrite(app, actor, `/v1/payments/${operation}`, key, body, (unit) =>
          followOn(app, actor, operation, input, { unit, idempotencyKey: key, headerSelector: undefined }),
        );
        printResult(flags.json, payment, [payment], COLUMNS);
      }),
    );
  }
}
