import { purgeExpiredIdempotencyKeys } from "../../store/idempotency";
import type { AppContext } from "../app-context";
import { scheduleJob } from "./schedule";

/** Every 10 minutes, deletes idempotency records past their retention (72 h by default). */
export function scheduleIdempotencyPurge(app: AppContext): void {
  scheduleJob(app, "idempotency-purge", "*/10 * * * *", async () => {
    const purged = await purgeExpiredIdempotencyKeys(app.db, Date.now());
    if (purged > 0) app.log.info({ purged }, "expired idempotency keys purged");
  });
}
