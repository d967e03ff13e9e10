import { randomBytes } from "node:crypto";
import { existsSync, renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../store/database";
import {
  firstCardTokenCiphertext,
  firstEndpointSecret,
  firstSecretCiphertext,
  forEachCardTokenCiphertext,
  forEachEndpointSecret,
  forEachSecretCiphertext,
  setCardTokenCiphertext,
  setEndpointSecrets,
  setSecretCiphertext,
} from "../../store/sealed-values";
import { getSetting, setSetting } from "../../store/settings";
import { scrubFingerprints } from "../../store/idempotency";
import { ConfigError, type Config } from "../config";
import { panAad } from "../tokens/tokenize";
import { Cipher, WrongMasterKeyError } from "./cipher";
import { fsyncDir, MASTER_KEY_FILE, masterKeySetting, NEXT_MASTER_KEY_FILE, readKeyFile, writeKeyFileAtomically } from "./master-key";
import { CANARY_SETTING } from "./master-key-check";
import { secretAad } from "./secret-store";


/** Webhook signing secrets are bound to their endpoint id (server/webhooks/signing-secrets.ts). */
const endpointAad = (endpointId: string) => endpointId;

/** The steps a rotation passes, for a test to stop the process at one (a simulated crash). */
export type RotationStep = "before-commit" | "after-commit";

export interface RotationResult {
  secrets: number;
  cardTokens: number;
  webhookSecrets: number;
  canary: boolean;
  /** Where the new key now lives: the data dir's key file, or nowhere (the operator's PAYGATE_MASTER_KEY). */
  keyFile: string | undefined;
}

function decrypts(cipher: Cipher, sealed: string, aad: string): boolean {
  try {
    cipher.decrypt(sealed, aad);
    return true;
  } catch (error) {
    if (error instanceof WrongMasterKeyError) return false;
    throw error;
  }
}

/**
 * Whether `cipher` reads what the store holds: the canary when there is one, else the
 * first ciphertext found. `undefined` when nothing is encrypted yet (any key fits).
 */
export async function storeMatchesKey(db: Db, cipher: Cipher): Promise<boolean | undefined> {
  const canary = await getSetting(db, CANARY_SETTING);
  if (canary !== undefined) return decrypts(cipher, canary, CANARY_SETTING);
  const secret = await firstSecretCiphertext(db);
  if (secret) return decrypts(cipher, secret.ciphertext, secretAad(secret.path, secret.version));
  const card = await firstCardTokenCiphertext(db);
  if (card) return decrypts(cipher, card.pan_encrypted, panAad(card.token));
  const endpoint = await firstEndpointSecret(db);
  if (endpoint) return decrypts(cipher, endpoint.secret_encrypted, endpointAad(endpoint.id));
  return undefined;
}

/** Re-encrypts the master-key canary, when the store has one. */
export async function reencryptCanary(db: Db, from: Cipher, to: Cipher): Promise<boolean> {
  const canary = await getSetting(db, CANARY_SETTING);
  if (canary === undefined) return false;
  await setSetting(db, CANARY_SETTING, to.encrypt(from.decrypt(canary, CANARY_SETTING), CANARY_SETTING));
  return true;
}

/**
 * Re-encrypts every stored ciphertext from one key to the other: each secret version,
 * each card token's number, each webhook endpoint's current and previous signing
 * secret, and the canary. Run it inside one transaction: a failure leaves every value
 * under the old key.
 */
export async function reencryptStore(trx: Db, from: Cipher, to: Cipher): Promise<Omit<RotationResult, "keyFile">> {
  const reseal = (sealed: string, aad: string) => to.encrypt(from.decrypt(sealed, aad), aad);
  let secrets = 0;
  await forEachSecretCiphertext(trx, async (row) => {
    await setSecretCiphertext(trx, row.path, row.version, reseal(row.ciphertext, secretAad(row.path, row.version)));
    secrets++;
  });
  let cardTokens = 0;
  await forEachCardTokenCiphertext(trx, async (row) => {
    await setCardTokenCiphertext(trx, row.token, reseal(row.pan_encrypted, panAad(row.token)));
    cardTokens++;
  });
  let webhookSecrets = 0;
  await forEachEndpointSecret(trx, async (row) => {
    const aad = endpointAad(row.id);
    const previous = row.previous_secret_encrypted === null ? null : reseal(row.previous_secret_encrypted, aad);
    await setEndpointSecrets(trx, { id: row.id, secret_encrypted: reseal(row.secret_encrypted, aad), previous_secret_encrypted: previous });
    webhookSecrets += previous === null ? 1 : 2;
  });
  const canary = await reencryptCanary(trx, from, to);
  // Fingerprints are keyed from the master key: under the new one none would match.
  await scrubFingerprints(trx);
  return { secrets, cardTokens, webhookSecrets, canary };
}

/**
 * Finishes or undoes a rotation that stopped between writing `master.key.next` and
 * renaming it over `master.key` (a crash, a kill): the committed transaction decides.
 * If the store reads with the next key, the rename is done now; otherwise the next
 * key is discarded and the old one stays. Only the data dir's key file rotates this
 * way; with PAYGATE_MASTER_KEY there is no file to settle.
 */
export async function settleInterruptedRotation(db: Db, config: Pick<Config, "masterKey" | "dataDir">): Promise<void> {
  if (config.masterKey) return;
  const next = join(config.dataDir, NEXT_MASTER_KEY_FILE);
  if (!existsSync(next)) return;
  const committed = (await storeMatchesKey(db, new Cipher(readKeyFile(next)))) === true;
  try {
    if (committed) renameSync(next, join(config.dataDir, MASTER_KEY_FILE));
    else unlinkSync(next);
  } catch (error) {
    // Another process starting at the same moment settled it first.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  fsyncDir(config.dataDir);
}

/** A rotation that cannot be done as asked; nothing was changed. */
export class RotationError extends Error {
  override name = "RotationError";
}

export interface RotateOptions {
  /** The new key; required with PAYGATE_MASTER_KEY, generated for the data dir's key file when absent. */
  newKey?: Buffer;
  /** Called at each step, so a test can simulate a crash there. */
  onStep?: (step: RotationStep) => void;
}

/**
 * Puts every stored ciphertext under a new master key. The caller holds the store
 * exclusively (no server may be writing with the old key meanwhile).
 *
 * Crash-safe order with the data dir's key file: the new key is first written to
 * `master.key.next` (fsynced), then every value is re-encrypted in ONE transaction,
 * then `master.key.next` is renamed over `master.key`. A crash before the commit
 * leaves the old key and old ciphertexts; after it, the new ones, which
 * `settleInterruptedRotation` completes at the next start. With PAYGATE_MASTER_KEY the
 * transaction alone decides, and the operator switches the variable afterwards.
 */
export async function rotateMasterKey(db: Db, config: Pick<Config, "masterKey" | "dataDir">, oldKey: Buffer, options: RotateOptions = {}): Promise<RotationResult> {
  if (config.masterKey && !options.newKey) throw new RotationError("PAYGATE_MASTER_KEY is set: give the new key with --new-key-file or PAYGATE_NEW_MASTER_KEY (paygate cannot change your environment)");
  const from = new Cipher(oldKey);
  if ((await storeMatchesKey(db, from)) === false) throw new ConfigError(masterKeySetting(config), `it is not the master key the data in ${config.dataDir} was encrypted with`);
  const newKey = options.newKey ?? randomBytes(32);
  if (newKey.equals(oldKey)) throw new RotationError("the new master key is the current one");
  const to = new Cipher(newKey);
  const keyFile = config.masterKey ? undefined : join(config.dataDir, MASTER_KEY_FILE);
  if (keyFile) writeKeyFileAtomically(config.dataDir, NEXT_MASTER_KEY_FILE, newKey);
  const counts = await db.transaction().execute(async (trx) => {
    const result = await reencryptStore(trx, from, to);
    options.onStep?.("before-commit");
    return result;
  });
  options.onStep?.("after-commit");
  if (keyFile) {
    renameSync(join(config.dataDir, NEXT_MASTER_KEY_FILE), keyFile);
    fsyncDir(config.dataDir);
  }
  return { ...counts, keyFile };
}
