import type { Kysely, Migration } from "kysely";

/**
 * The dashboard's sessions and one-time sign-in tokens. In the database, not in process
 * memory: every instance sharing the database must know a session, and a sign-in token
 * used on one must be spent for all. Rows are keyed by a keyed hash of the token, never
 * the token itself, and name the API key, never its plaintext.
 */
export const dashboardSessionsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("dashboard_sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("api_key_id", "text", (c) => c.notNull())
      .addColumn("csrf_token", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("last_seen_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("dashboard_sessions_key").on("dashboard_sessions").column("api_key_id").execute();
    await db.schema
      .createTable("dashboard_sign_in_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("api_key_id", "text", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .execute();
  },
};
