import { schedule } from "node-cron";
import type { AppContext } from "../app-context";

/**
 * Runs `job` on a cron `expression` in this process (node-cron's in-process tasks;
 * its daemon mode does not work inside the single executable). Runs never overlap;
 * failures are logged, never thrown. Stopped at shutdown.
 */
export function scheduleJob(app: AppContext, name: string, expression: string, job: () => Promise<unknown>): void {
  const task = schedule(
    expression,
    async () => {
      try {
        await job();
      } catch (error) {
        app.log.error({ err: error, job: name }, "scheduled job failed");
      }
    },
    // A sweep skipped while the event loop was busy does no harm; the next one runs.
    { name, noOverlap: true, suppressMissedWarning: true },
  );
  app.closers.push(async () => {
    await task.stop();
  });
}
