import type { Command } from "commander";
import { byOperator } from "../../server/audit/audit-actor";
import { createApiKey, listMerchantApiKeys, revokeApiKey, rotateApiKey } from "../../server/keys/api-keys";
import type { ApiKey } from "../../server/keys/api-key";
import { isScope, type Scope } from "../../server/keys/scopes";
import { getMerchant } from "../../server/merchants/merchants";
import { writeUnit } from "../../server/unit-of-work";
import { withApp, withCommonOptions, type DataFlags } from "../context";
import { UsageError } from "../exit";
import { printResult } from "../output";

const COLUMNS = ["id", "name", "type", "mode", "role", "key_prefix", "last4", "status", "scopes", "last_used_at"];

interface CreateFlags extends DataFlags {
  merchant: string;
  name: string;
  type: string;
  mode: string;
  admin?: boolean;
  scopes?: string;
}

function parseScopes(text: string | undefined): Scope[] | undefined {
  if (text === undefined) return undefined;
  const scopes = text.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = scopes.find((s) => !isScope(s));
  if (bad !== undefined) throw new UsageError(`unknown scope "${bad}"`);
  return scopes as Scope[];
}

/** Prints a key whose plaintext is shown this once. */
function printNewKey(json: boolean | undefined, key: ApiKey): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(key, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${key.key}\n`);
  process.stderr.write(`API key ${key.id} (${key.type}, ${key.mode}, ${key.role}). Store it now: it is not shown again.\n`);
}

export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("Manage a merchant's API keys");
  withCommonOptions(keys.command("create").description("Create an API key; prints the plaintext once"))
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .requiredOption("--name <name>", "a name for the key")
    .option("--type <type>", "secret or publishable", "secret")
    .option("--mode <mode>", "test or live", "test")
    .option("--admin", "an admin key (role admin: /admin/* for every merchant)")
    .option("--scopes <list>", "comma-separated scopes (default: all of the key type's scopes)")
    .action((flags: CreateFlags) => {
      if (flags.type !== "secret" && flags.type !== "publishable") throw new UsageError("--type must be secret or publishable");
      if (flags.mode !== "test" && flags.mode !== "live") throw new UsageError("--mode must be test or live");
      const scopes = parseScopes(flags.scopes);
      return withApp(flags, async (app) => {
        const merchant = await getMerchant(app.db, flags.merchant);
        const input = {
          merchantId: merchant.id,
          name: flags.name,
          type: flags.type as ApiKey["type"],
          mode: flags.mode as ApiKey["mode"],
          role: flags.admin ? ("admin" as const) : ("merchant" as const),
          ...(scopes && { scopes }),
        };
        const key = await writeUnit(app.writes).commit((trx) => createApiKey(trx, input, undefined, byOperator()));
        printNewKey(flags.json, key);
      });
    });
  withCommonOptions(keys.command("list").description("List a merchant's keys (never their plaintext)"))
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .action((flags: DataFlags & { merchant: string }) =>
      withApp(flags, async (app) => {
        const merchant = await getMerchant(app.db, flags.merchant);
        const list = await listMerchantApiKeys(app.db, merchant.id);
        printResult(flags.json, { object: "list", data: list, has_more: false }, list, COLUMNS);
      }),
    );
  withCommonOptions(keys.command("rotate").description("Replace a key's value; the old value stops working at once"))
    .argument("<keyId>", "the key's id (key_…)")
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .action((keyId: string, flags: DataFlags & { merchant: string }) =>
      withApp(flags, async (app) => {
        const merchant = await getMerchant(app.db, flags.merchant);
        printNewKey(flags.json, await writeUnit(app.writes).commit((trx) => rotateApiKey(trx, merchant.id, keyId, undefined, byOperator())));
      }),
    );
  withCommonOptions(keys.command("revoke").description("Permanently deactivate a key"))
    .argument("<keyId>", "the key's id (key_…)")
    .requiredOption("--merchant <id>", "merchant UUID or mrc_ short id")
    .action((keyId: string, flags: DataFlags & { merchant: string }) =>
      withApp(flags, async (app) => {
        const merchant = await getMerchant(app.db, flags.merchant);
        const key = await writeUnit(app.writes).commit((trx) => revokeApiKey(trx, merchant.id, keyId, undefined, byOperator()));
        printResult(flags.json, key, [key], COLUMNS);
      }),
    );
}
