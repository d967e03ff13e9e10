import type { AppContext } from "../app-context";
import { scheduleJob } from "../jobs/schedule";
import { Dispatcher } from "./dispatcher";

/** What the rest of paygate needs from webhook delivery. */
export interface WebhookDelivery {
  /** Called after a commit that enqueued deliveries: send them now rather than at the next sweep. */
  kick(): void;
  stop(): Promise<void>;
}

/** Used by the CLI, which never sends: a running server's sweep picks its changes up. */
export const NO_DELIVERY: WebhookDelivery = { kick: () => undefined, stop: async () => undefined };

/** How long shutdown waits for sends in flight before cutting them (their rows stay pending). */
const STOP_GRACE_MS = 2_000;

/**
 * Starts delivery for a serving process: the dispatcher sends what is due, woken right
 * after commits (`kick`), when a send finishes, and by a sweep every second that picks
 * up retries and rows written by other processes (the CLI's replay).
 *
 * Every second, too, a process not yet known to be production reads whether another
 * process marked the database since: kept-alive connections opened before the mark
 * are then never lent again (server/webhooks/send.ts), even those kept too busy to
 * idle out, which no new connection's check would reach.
 */
export function startWebhookDelivery(app: AppContext): WebhookDelivery {
  const dispatcher = new Dispatcher(app);
  scheduleJob(app, "webhook-sweep", "* * * * * *", async () => dispatcher.pump());
  if (!app.production.known) scheduleJob(app, "production-mark", "* * * * * *", () => app.production.check());
  dispatcher.pump();
  return { kick: () => dispatcher.pump(), stop: () => dispatcher.stop(STOP_GRACE_MS) };
}
