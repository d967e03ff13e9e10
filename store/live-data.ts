import type { Db } from "./database";

/** Whether the store holds an active live API key or an active live connector account. */
export async function holdsLiveAccess(db: Db): Promise<boolean> {
  const [key, account] = await Promise.all([
    db.selectFrom("api_keys").select("id").where("mode", "=", "live").where("status", "=", "active").limit(1).executeTakeFirst(),
    db.selectFrom("connector_accounts").select("id").where("mode", "=", "live").where("is_active", "=", 1).limit(1).executeTakeFirst(),
  ]);
  return key !== undefined || account !== undefined;
}
