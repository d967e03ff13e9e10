import { sql } from "kysely";
import type { Db } from "../../store/database";

export interface RowDump {
  /** Every value of every row, one JSON line per row. */
  text: string;
  rows: number;
  /** Rows read per table, so a scan can prove it was not vacuous. */
  tables: Record<string, number>;
}

/**
 * Every row of every table, read through the store on either engine: the scans for
 * secrets at rest that on SQLite also read the raw files.
 */
export async function dumpAllRows(db: Db): Promise<RowDump> {
  const tables = (await db.introspection.getTables({ withInternalKyselyTables: true })).map((t) => t.name);
  let text = "";
  let rows = 0;
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const result = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
    counts[table] = result.rows.length;
    rows += result.rows.length;
    for (const row of result.rows) text += `${JSON.stringify(row)}\n`;
  }
  return { text, rows, tables: counts };
}
