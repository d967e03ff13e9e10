import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import type { AppContext } from "../server/app-context";
import type { Mode } from "../server/connectors/connector";
import { ApiError, errors } from "../server/errors";
import { beginIdempotent, fingerprint } from "../server/http/idempotency";
import { render } from "../server/http/pipeline";
import { requestIdFor } from "../server/http/request-id";
import { json } from "../server/http/route";
import type { Actor } from "../server/keys/actor";
import { SECRET_KEY_SCOPES } from "../server/keys/scopes";
import { getMerchant } from "../server/merchants/merchants";
import type { UnitOfWork } from "../server/unit-of-work";
import { UsageError } from "./exit";

/**
 * The `apiKeyId` of the operator at the command line, per merchant and mode: it has no
 * key, but idempotency records and processor references are scoped by it, apart from
 * every real key's.
 */
const cliKeyId = (merchantId: string, mode: Mode) => `cli:${merchantId}:${mode}`;

export interface MerchantFlags {
  merchant: string;
  mode: string;
}

/** `--merchant` and `--mode` (test|live, default test), which merchant-scoped commands take. */
export function merchantOptions(command: Command): Command {
  return command.requiredOption("--merchant <id>", "merchant UUID or mrc_ short id").option("--mode <mode>", "test or live", "test");
}

/** Acts as a secret key of the merchant in the mode with every merchant scope. */
export async function operatorActor(app: AppContext, flags: MerchantFlags): Promise<Actor> {
  if (flags.mode !== "test" && flags.mode !== "live") throw new UsageError("--mode must be test or live");
  const merchant = await getMerchant(app.db, flags.merchant);
  return {
    apiKeyId: cliKeyId(merchant.id, flags.mode as Mode),
    merchantId: merchant.id,
    merchantShortId: merchant.short_id,
    mode: flags.mode as Mode,
    role: "merchant",
    keyType: "secret",
    scopes: new Set(SECRET_KEY_SCOPES),
  };
}

/** `--idempotency-key` or a fresh one, printed on stderr so the operator can retry with it. */
export function idempotencyKeyOf(given: string | undefined): string {
  if (given !== undefined) return given;
  const key = `cli_${randomBytes(12).toString("hex")}`;
  process.stderr.write(`idempotency key: ${key} (retry with --idempotency-key ${key})\n`);
  return key;
}

/**
 * Runs a write under the same Idempotency-Key record as the HTTP API: a retry with the
 * same key and body replays the first answer (or its error) instead of acting twice.
 */
export async function idempotentWrite<T>(app: AppContext, actor: Actor, path: string, key: string, body: unknown, write: (unit: UnitOfWork) => Promise<T>): Promise<T> {
  const scope = { apiKeyId: actor.apiKeyId, method: "POST", path, key };
  const begun = await beginIdempotent(app, scope, fingerprint(app.fingerprintKey, "POST", path, body, null));
  if ("replay" in begun) {
    const stored = JSON.parse(begun.replay.body) as T & { error?: { type: string; code: string; message: string } };
    if (begun.replay.status >= 400 && stored.error) throw new ApiError(begun.replay.status, stored.error.code, stored.error.message);
    process.stderr.write("replayed the answer recorded for this idempotency key\n");
    return stored;
  }
  const session = begun.session;
  // Rendered as the HTTP API renders them, so both front doors keep the same records.
  const requestId = requestIdFor(null);
  const answer = (value: unknown) => render(json(200, value), requestId);
  try {
    const value = await write(session.unit(answer, (reply) => reply));
    await session.finish(answer(value));
    return value;
  } catch (error) {
    const apiError = error instanceof ApiError ? error : errors.internal();
    await session.finish(render(apiError, requestId), apiError.code);
    throw error;
  }
}
