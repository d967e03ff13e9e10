import { findDueDeliveries, insertAttempt, leaseDelivery, releaseLease, settleLeasedDelivery, type DueDelivery } from "../../store/webhooks";
import type { AppContext } from "../app-context";
import { newAttemptId } from "../ids";
import { postWebhook, WebhookConnections, type AttemptOutcome } from "./send";
import { webhookHeaders } from "./signature";
import { signingSecrets } from "./signing-secrets";

/**
 * Sends in flight in this process, and to one endpoint: a receiver that never answers
 * only ever holds its share, the other endpoints keep theirs.
 */
const LIMITS = { total: 64, perEndpoint: 8 };

/** Added to the send timeout to make a lease: time to write the outcome after the answer. */
const LEASE_SLACK_MS = 5_000;

/**
 * Sends due deliveries from the database, within the limits. Every send is leased in
 * the database first, so senders in several processes never send the same attempt at
 * once, and a crashed sender's rows come back when its leases expire.
 */
export class Dispatcher {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private readonly cancel = new AbortController();
  private readonly connections = new WebhookConnections();
  private stopped = false;
  private filling: Promise<void> | undefined;
  private fillAgain = false;

  constructor(private readonly app: AppContext) {}

  /** Starts what is due and fits in the limits. Cheap and safe to call at any time. */
  pump(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    this.filling = this.fill()
      .catch((error: unknown) => this.app.log.error({ err: error }, "webhook dispatch failed"))
      .finally(() => {
        this.filling = undefined;
        if (this.fillAgain) {
          this.fillAgain = false;
          this.pump();
        }
      });
  }

  /** Stops starting sends, waits `graceMs` for those in flight, then cuts the rest (their rows stay pending). */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    await this.filling;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled(this.inFlight.values()), grace]);
    clearTimeout(timer);
    this.cancel.abort();
    await Promise.allSettled(this.inFlight.values());
    this.connections.close();
  }

  private busyEndpoints(): string[] {
    return [...this.perEndpoint].filter(([, count]) => count >= LIMITS.perEndpoint).map(([id]) => id);
  }

  private async fill(): Promise<void> {
    while (!this.stopped) {
      const free = LIMITS.total - this.inFlight.size;
      if (free <= 0) return;
      const due = await findDueDeliveries(this.app.db, Date.now(), this.busyEndpoints(), free * 2);
      const candidates: DueDelivery[] = [];
      const planned = new Map(this.perEndpoint);
      for (const delivery of due) {
        if (candidates.length >= free) break;
        if (this.inFlight.has(delivery.id) || (planned.get(delivery.endpoint_id) ?? 0) >= LIMITS.perEndpoint) continue;
        planned.set(delivery.endpoint_id, (planned.get(delivery.endpoint_id) ?? 0) + 1);
        candidates.push(delivery);
      }
      const now = Date.now();
      const leasedUntil = now + this.app.config.webhookTimeoutMs + LEASE_SLACK_MS;
      // One write leases the whole batch: one commit instead of one per delivery.
      const leased = await this.app.writes.run(async (trx) => {
        const won: DueDelivery[] = [];
        for (const delivery of candidates) if (await leaseDelivery(trx, delivery.id, now, leasedUntil)) won.push(delivery);
        return won;
      });
      // Started even if stop() came meanwhile: stop() waits for them, and a lease left
      // unused would hold the row back until it expires.
      for (const delivery of leased) this.start(delivery, leasedUntil);
      // Nothing startable: everything due was leased by another sender or is for busy endpoints.
      if (leased.length === 0) return;
    }
  }

  private start(delivery: DueDelivery, leasedUntil: number): void {
    const endpoint = delivery.endpoint_id;
    this.perEndpoint.set(endpoint, (this.perEndpoint.get(endpoint) ?? 0) + 1);
    const sending = this.attempt({ delivery, leasedUntil })
      .catch((error: unknown) => this.app.log.error({ err: error, delivery_id: delivery.id }, "webhook attempt could not be recorded"))
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.perEndpoint.get(endpoint) ?? 1) - 1;
        if (left === 0) this.perEndpoint.delete(endpoint);
        else this.perEndpoint.set(endpoint, left);
        this.pump();
      });
    this.inFlight.set(delivery.id, sending);
  }

  private async attempt(leased: DeliveryWithLease): Promise<void> {
    const { delivery } = leased;
    const attemptedAt = new Date();
    const outcome = await this.send(delivery, attemptedAt);
    if (outcome.statusCode === null && this.cancel.signal.aborted) {
      // Cut by shutdown: no outcome to record; the row is due again at once on the next start.
      await this.app.writes.run((trx) => releaseLease(trx, delivery.id, leased.leasedUntil));
      return;
    }
    await this.record(leased, outcome, attemptedAt);
  }

  private async send(delivery: DueDelivery, now: Date): Promise<AttemptOutcome> {
    let secrets: string[];
    try {
      secrets = signingSecrets(this.app.cipher, delivery.endpoint_id, delivery, now.toISOString());
    } catch {
      return { delivered: false, statusCode: null, durationMs: 0, error: "the endpoint's signing secret cannot be decrypted (master key changed?)", responseExcerpt: null };
    }
    const headers = webhookHeaders(secrets, delivery.payload, delivery.event_id, now);
    return postWebhook({ url: delivery.url, mode: delivery.mode, self: this.app.self, body: delivery.payload, headers }, this.app.config.webhookTimeoutMs, this.cancel.signal, this.connections);
  }

  /** Logs the attempt and moves the delivery on: succeeded, pending until the next retry, or dead. */
  private async record({ delivery, leasedUntil }: DeliveryWithLease, outcome: AttemptOutcome, attemptedAt: Date): Promise<void> {
    const attempt = delivery.attempts + 1;
    const retryDelay = outcome.delivered ? undefined : this.app.config.webhookRetryScheduleMs[attempt - 1];
    const status = outcome.delivered ? "succeeded" : retryDelay === undefined ? "dead" : "pending";
    const now = Date.now();
    const applied = await this.app.writes.run(async (trx) => {
      await insertAttempt(trx, {
        id: newAttemptId(),
        delivery_id: delivery.id,
        attempted_at: attemptedAt.toISOString(),
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        response_excerpt: outcome.responseExcerpt,
      });
      return settleLeasedDelivery(
        trx,
        { id: delivery.id, leasedUntil, attempts: delivery.attempts },
        { status, attempts: attempt, next_attempt_at: retryDelay === undefined ? null : now + retryDelay, updated_at: new Date(now).toISOString() },
      );
    });
    // Not applied: the delivery was replayed meanwhile and is due again with a fresh schedule.
    if (!applied) return;
    this.app.metrics.webhookAttempt(status);
    const fields = { delivery_id: delivery.id, event_id: delivery.event_id, endpoint_id: delivery.endpoint_id, attempt, status_code: outcome.statusCode, duration_ms: outcome.durationMs, error: outcome.error };
    if (status === "dead") this.app.log.warn(fields, "webhook delivery dead-lettered after its last retry");
    else this.app.log.debug({ ...fields, status }, "webhook attempt");
  }
}

interface DeliveryWithLease {
  delivery: DueDelivery;
  leasedUntil: number;
}
