import { sql, type Expression, type SqlBool } from "kysely";

/** Where a newest-first page ended: the last row's creation time and id. */
export interface Cursor {
  created_at: string;
  id: string;
}

/**
 * Rows after `cursor` in newest-first order (`created_at desc, id desc`): a row-value
 * comparison, which SQLite (3.15+) and PostgreSQL both evaluate with the index.
 * `table` qualifies the columns in joined queries.
 */
export function olderThan(cursor: Cursor, table?: string): Expression<SqlBool> {
  const column = (name: string) => sql.ref(table ? `${table}.${name}` : name);
  return sql<SqlBool>`(${column("created_at")}, ${column("id")}) < (${cursor.created_at}, ${cursor.id})`;
}
