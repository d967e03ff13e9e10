import { markSettingsChanged } from "./settings-changes";
import type { Db } from "./database";

/** Rows read per query while walking a table, so a large store is never held in memory at once. */
const PAGE = 500;

/** Calls `each` for every secret version, in key order. */
export async function forEachSecretCiphertext(db: Db, each: (row: { path: string; version: number; ciphertext: string }) => Promise<void>): Promise<void> {
  let after: { path: string; version: number } | undefined;
  for (;;) {
    let query = db.selectFrom("secrets").select(["path", "version", "ciphertext"]).orderBy("path").orderBy("version").limit(PAGE);
    if (after) {
      const { path, version } = after;
      query = query.where((eb) => eb.or([eb("path", ">", path), eb.and([eb("path", "=", path), eb("version", ">", version)])]));
    }
    const rows = await query.execute();
    for (const row of rows) await each(row);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1];
  }
}

export async function setSecretCiphertext(db: Db, path: string, version: number, ciphertext: string): Promise<void> {
  await db.updateTable("secrets").set({ ciphertext }).where("path", "=", path).where("version", "=", version).execute();
  markSettingsChanged();
}

/** Calls `each` for every card token's encrypted number. */
export async function forEachCardTokenCiphertext(db: Db, each: (row: { token: string; pan_encrypted: string }) => Promise<void>): Promise<void> {
  let after: string | undefined;
  for (;;) {
    let query = db.selectFrom("card_tokens").select(["token", "pan_encrypted"]).orderBy("token").limit(PAGE);
    if (after !== undefined) query = query.where("token", ">", after);
    const rows = await query.execute();
    for (const row of rows) await each(row);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]?.token;
  }
}

export async function setCardTokenCiphertext(db: Db, token: string, panEncrypted: string): Promise<void> {
  await db.updateTable("card_tokens").set({ pan_encrypted: panEncrypted }).where("token", "=", token).execute();
}

interface EndpointSecrets {
  id: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
}

/** Calls `each` for every webhook endpoint's signing secrets, deleted endpoints included (their rows keep the secret). */
export async function forEachEndpointSecret(db: Db, each: (row: EndpointSecrets) => Promise<void>): Promise<void> {
  let after: string | undefined;
  for (;;) {
    let query = db.selectFrom("webhook_endpoints").select(["id", "secret_encrypted", "previous_secret_encrypted"]).orderBy("id").limit(PAGE);
    if (after !== undefined) query = query.where("id", ">", after);
    const rows = await query.execute();
    for (const row of rows) await each(row);
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]?.id;
  }
}

export async function setEndpointSecrets(db: Db, row: EndpointSecrets): Promise<void> {
  await db
    .updateTable("webhook_endpoints")
    .set({ secret_encrypted: row.secret_encrypted, previous_secret_encrypted: row.previous_secret_encrypted })
    .where("id", "=", row.id)
    .execute();
  markSettingsChanged();
}

/** One stored ciphertext with where it lives, when the store holds any: enough to tell which key wrote the data. */
export async function firstSecretCiphertext(db: Db) {
  return db.selectFrom("secrets").select(["path", "version", "ciphertext"]).limit(1).executeTakeFirst();
}

export async function firstCardTokenCiphertext(db: Db) {
  return db.selectFrom("card_tokens").select(["token", "pan_encrypted"]).limit(1).executeTakeFirst();
}

export async function firstEndpointSecret(db: Db) {
  return db.selectFrom("webhook_endpoints").select(["id", "secret_encrypted"]).limit(1).executeTakeFirst();
}
