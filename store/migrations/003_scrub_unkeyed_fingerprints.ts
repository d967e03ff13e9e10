import type { Kysely, Migration } from "kysely";
import { SCRUBBED_FINGERPRINT } from "../idempotency";

/**
 * Fingerprints written before they were keyed are unkeyed SHA-256 digests of request
 * bodies, tokenization bodies (PAN and CVC) among them: they are overwritten. A row so
 * scrubbed replays its answer for any parameters until it expires (72 h at most).
 */
export const scrubUnkeyedFingerprintsMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.updateTable("idempotency_keys").set({ fingerprint: SCRUBBED_FINGERPRINT }).execute();
  },
};
