import type { Db } from "./database";

/** One ciphertext of each kind paygate stores, when any: enough to tell which key wrote the data. */
export async function sampleCiphertexts(db: Db): Promise<string[]> {
  const found = await Promise.all([
    db.selectFrom("card_tokens").select("pan_encrypted as sealed").limit(1).executeTakeFirst(),
    db.selectFrom("secrets").select("ciphertext as sealed").limit(1).executeTakeFirst(),
    db.selectFrom("webhook_endpoints").select("secret_encrypted as sealed").limit(1).executeTakeFirst(),
  ]);
  return found.flatMap((row) => (row ? [row.sealed] : []));
}
