import { CompiledQuery, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type DialectAdapter, type Driver, type SqliteDialectConfig } from "kysely";

/**
 * Opens every transaction with `BEGIN IMMEDIATE`. kysely's driver issues a deferred
 * `BEGIN`, whose write lock is only requested by the first write: when a read came
 * first and another process holds the lock, SQLite fails at once (SQLITE_BUSY, or
 * SQLITE_BUSY_SNAPSHOT if the other process committed since the read) and never runs
 * the busy handler. Taking the lock at BEGIN makes a writer wait up to the busy
 * timeout instead. paygate opens transactions only to write.
 */
class ImmediateTransactionDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}

/**
 * SQLite does run DDL inside transactions; kysely's adapter says it does not, so its
 * migrator runs without one and two processes starting on a fresh data dir could both
 * apply the same migration. Declared transactional, the migrator reads the applied
 * migrations and applies the rest inside one `BEGIN IMMEDIATE`: the second process
 * waits for the first, then finds nothing left to do.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    return new ImmediateTransactionDriver(this.config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}
