import type { Command } from "commander";
import { createConnectorAccount, deactivateAccount, listMerchantAccounts, updateAccount } from "../../server/accounts/accounts";

import { accountUpdateBody, newAccountBody } from "../../server/accounts/routes";
import { byOperator } from "../../server/audit/audit-actor";
import { parse } from "../../server/http/validate";
import { getMerchant } from "../../server/merchants/merchants";
import { writeUnit } from "../../server/unit-of-work";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { printResult } from "../output";

const COLUMNS = ["short_id", "connector_id", "mode", "key_kind", "label", "is_default", "is_active", "credential_ref"];

interface AccountFlags extends DataFlags {
  merchant: string;
  connector?: string;
  mode?: string;
  keyKind?: string;
  label?: string;
  default?: boolean;
  credentialRef?: string;
}

/** `--default` / `--no-default`, when given. */
const defaultFlag = (flags: AccountFlags) => (flags.default === undefined ? {} : { is_default: flags.default });

export function registerAccounts(program: Command): void {
  const accounts = program.command("accounts").description("Manage a merchant's connector accounts");
  withCommonOptions(accounts.command("create").description("Bind a merchant to a processor's credentials"))
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .requiredOption("--connector <id>", "mock, stripe, tsys or nmi")
    .requiredOption("--mode <mode>", "test or live")
    .requiredOption("--key-kind <kind>", "api_key (mock, stripe), device_credential (tsys) or security_key (nmi)")
    .requiredOption("--label <label>", "unique per merchant, connector and mode")
    .requiredOption("--credential-ref <ref>", "secret://<path> or env://<VARIABLE>")
    .option("--default", "make it the default for its connector, mode and key kind")
    .action((flags: AccountFlags) =>
      withApp(flags, async (app) => {
        const input = parse(newAccountBody, {
          connector_id: flags.connector,
          mode: flags.mode,
          key_kind: flags.keyKind,
          label: flags.label,
          credential_ref: flags.credentialRef,
          is_default: flags.default === true,
        });
        const merchant = await getMerchant(app.db, flags.merchant);
        const account = await writeUnit(app.writes).commit((trx) => createConnectorAccount({ db: trx, cipher: app.cipher }, merchant, input, undefined, byOperator()));
        printResult(flags.json, account, [account], ["id", ...COLUMNS]);
      }),
    );
  withCommonOptions(accounts.command("list").description("List a merchant's connector accounts"))
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .option("--include-inactive", "also list deleted accounts")
    .action((flags: AccountFlags & { includeInactive?: boolean }) =>
      withApp(flags, async (app) => {
        const list = await listMerchantAccounts(app.db, await getMerchant(app.db, flags.merchant), flags.includeInactive === true);
        printResult(flags.json, { object: "list", data: list, has_more: false }, list, COLUMNS);
      }),
    );
  withCommonOptions(accounts.command("update").description("Change an account's credential_ref, label or default flag"))
    .argument("<account>", "ca_ short id or UUID")
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .option("--label <label>", "new label")
    .option("--credential-ref <ref>", "move the account to another secret")
    .option("--default", "make it the default")
    .option("--no-default", "stop it being the default")
    .action((account: string, flags: AccountFlags) =>
      withApp(flags, async (app) => {
        const update = parse(accountUpdateBody, {
          ...(flags.label !== undefined && { label: flags.label }),
          ...(flags.credentialRef !== undefined && { credential_ref: flags.credentialRef }),
          ...defaultFlag(flags),
        });
        const merchant = await getMerchant(app.db, flags.merchant);
        const updated = await writeUnit(app.writes).commit((trx) => updateAccount({ db: trx, cipher: app.cipher }, merchant, account, update, undefined, byOperator()));
        printResult(flags.json, updated, [updated], COLUMNS);
      }),
    );
  withCommonOptions(accounts.command("delete").description("Deactivate an account for good (it settles no new charges)"))
    .argument("<account>", "ca_ short id or UUID")
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .action((account: string, flags: AccountFlags) =>
      withApp(flags, async (app) => {
        const merchant = await getMerchant(app.db, flags.merchant);
        await writeUnit(app.writes).commit((trx) => deactivateAccount(trx, merchant, account, undefined, byOperator()));
        if (flags.json) process.stdout.write(`${JSON.stringify({ deleted: account })}\n`);
        else process.stdout.write(`deactivated ${account}\n`);
      }),
    );
}
