import type { Db } from "./database";
import { getSetting, insertSettingIfAbsent } from "./settings";

/**
 * A database served by a production server (PAYGATE_ENV or NODE_ENV `production`) says
 * so in `settings`, for good: every process that opens it afterwards, whatever its own
 * environment, follows the production rules (server/production-rule.ts). Nothing
 * removes the row; a copy of the database keeps it.
 */
const NAME = "environment";
const PRODUCTION = "production";

/** Marks the database production; a no-op when it already is. */
export async function markProduction(db: Db): Promise<void> {
  await insertSettingIfAbsent(db, NAME, PRODUCTION);
}

/** Whether a production server has served this database. */
export async function isMarkedProduction(db: Db): Promise<boolean> {
  return (await getSetting(db, NAME)) === PRODUCTION;
}
