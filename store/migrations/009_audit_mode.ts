import { sql, type Kysely, type Migration } from "kysely";

/**
 * The mode of each audit record, so a test admin key reads no live records. Earlier
 * records get theirs from what they name: the connector account's row, or the mode
 * their details already carried (keys, endpoints, routing, event replays). Merchants,
 * secrets and DLQ replays have none and stay null.
 */
export const auditModeMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("audit_log").addColumn("mode", "text").execute();
    await sql`UPDATE audit_log SET mode = (SELECT a.mode FROM connector_accounts a WHERE a.id = audit_log.target_id) WHERE target_type = 'connector_account'`.execute(db);
    for (const mode of ["test", "live"]) {
      await sql`UPDATE audit_log SET mode = ${mode} WHERE mode IS NULL AND target_type <> 'connector_account' AND details LIKE ${`%"mode":"${mode}"%`}`.execute(db);
    }
  },
};
