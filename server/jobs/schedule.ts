import { schedule, type ScheduledTask } from "node-cron";
import type { AppContext } from "../app-context";

/**
 * Runs `job` on a cron `expression` in this process (node-cron's in-process tasks;
 * its daemon mode does not work inside the single executable). Runs never overlap;
 * failures are logged, never thrown. Stopped at shutdown.
 *
 * The task is created on the next turn of the event loop, after the server that asks
 * for it is ready: node-cron's first schedule builds ICU date formatters, tens of ms
 * of a cold start that no request waits for (the first run is a whole second away).
 */
export function scheduleJob(app: AppContext, name: string, expression: string, job: () => Promise<unknown>): void {
  let task: ScheduledTask | undefined;
  let stopped = false;
  const start = setImmediate(() => {
    if (stopped) return;
    task = schedule(
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
  });
  app.closers.push(async () => {
    stopped = true;
    clearImmediate(start);
    await task?.stop();
  });
}
