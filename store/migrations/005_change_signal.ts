import { PostgresAdapter, sql, type Kysely, type Migration } from "kysely";

/**
 * Tables whose changes other processes must see at once: the API key cache reads the
 * first two, the settings cache (server/cache/settings-cache.ts) the rest.
 */
const SIGNALLED_TABLES = ["api_keys", "merchants", "connector_accounts", "routing", "secrets", "webhook_endpoints"];

/**
 * PostgreSQL only: other processes learn of key, merchant and charge-settings changes from a NOTIFY
 * (delivered at commit) and a sequence they can poll (store/postgres-change-signal.ts).
 * A trigger, not the write path, sends both, so no write can forget them. SQLite has
 * `PRAGMA data_version` and needs nothing.
 */
export const changeSignalMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await sql`create sequence paygate_data_version`.execute(db);
    await sql`create function paygate_data_changed() returns trigger language plpgsql as $$
      begin
        perform nextval('paygate_data_version');
        perform pg_notify('paygate_data_changed', '');
        return null;
      end $$`.execute(db);
    for (const table of SIGNALLED_TABLES) {
      await sql`create trigger ${sql.id(`${table}_changed`)} after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function paygate_data_changed()`.execute(db);
    }
  },
};
