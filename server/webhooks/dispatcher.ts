import { findDueDeliveries, leaseDeliveries, releaseLease, settleLeasedDeliveries, type DueDelivery, type LeasedOutcome } from "../../store/webhooks";
import type { AppContext } from "../app-context";
import { newAttemptId } from "../ids";
import { postWebhook, WebhookConnections, type AttemptOutcome } from "./send";
import { webhookHeaders } from "./signature";
import { SigningSecretCache, signingSecrets } from "./signing-secrets";

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
  /** Every attempt until its outcome is recorded (what stop() waits for). */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Sends waiting for an answer, per endpoint and in all: what the limits count. */
  private readonly perEndpoint = new Map<string, number>();
  private sending = 0;
  private readonly cancel = new AbortController();
  private readonly connections: WebhookConnections;
  private readonly secrets: SigningSecretCache;
  private stopped = false;
  private fillPlanned = false;
  private filling: Promise<void> | undefined;
  private fillAgain = false;
  /** Outcomes of finished sends, recorded by the next fill in the same commit as its lease. */
  private outcomes: PendingOutcome[] = [];

  constructor(private readonly app: AppContext) {
    this.secrets = new SigningSecretCache(app.cipher);
    this.connections = new WebhookConnections(app.targets);
  }

  /** Starts what is due and fits in the limits, and records finished sends. Cheap and safe to call at any time. */
  pump(): void {
    if (this.fillPlanned || (this.stopped && this.outcomes.length === 0)) return;
    if (this.filling) {
      this.fillAgain = true;
      return;
    }
    // Every kick and finished send of this turn of the event loop is served by one fill:
    // one look-up and one commit for all of them, not one per call.
    this.fillPlanned = true;
    setImmediate(() => {
      this.fillPlanned = false;
      this.filling = this.fill()
        .catch((error: unknown) => this.app.log.error({ err: error }, "webhook dispatch failed"))
        .finally(() => {
          this.filling = undefined;
          if (this.fillAgain) {
            this.fillAgain = false;
            this.pump();
          }
        });
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

  /**
   * Records the outcomes that are waiting and leases what is due and fits in the limits:
   * both writes are issued together, so SQLite's group commit makes them one commit.
   */
  private async fill(): Promise<void> {
    for (;;) {
      const candidates = this.stopped ? [] : await this.candidates();
      const outcomes = this.outcomes.splice(0);
      if (outcomes.length > 0) this.record(outcomes);
      if (candidates.length === 0) return;
      const now = Date.now();
      const leasedUntil = now + this.app.config.webhookTimeoutMs + LEASE_SLACK_MS;
      const leased = await this.app.writes.run((trx) => leaseDeliveries(trx, candidates, now, leasedUntil));
      // Started even if stop() came meanwhile: stop() waits for them, and a lease left
      // unused would hold the row back until it expires.
      for (const delivery of leased) this.start(delivery, leasedUntil);
      // Another look only when other senders took some of the rows while this one won
      // others: more may be due for it. Rows held back by this process's own limits
      // are found by the pump that a finishing send brings; looking again at once would
      // scan the whole backlog of the endpoints at their limit to find nothing.
      if (leased.length === 0 || leased.length === candidates.length) return;
    }
  }

  /** Due deliveries this process can start now, within its limits. */
  private async candidates(): Promise<string[]> {
    const free = LIMITS.total - this.sending;
    if (free <= 0) return [];
    const due = await findDueDeliveries(this.app.db, Date.now(), this.busyEndpoints(), free * 2);
    const candidates: string[] = [];
    const planned = new Map(this.perEndpoint);
    for (const delivery of due) {
      if (candidates.length >= free) break;
      if (this.inFlight.has(delivery.id) || (planned.get(delivery.endpoint_id) ?? 0) >= LIMITS.perEndpoint) continue;
      planned.set(delivery.endpoint_id, (planned.get(delivery.endpoint_id) ?? 0) + 1);
      candidates.push(delivery.id);
    }
    return candidates;
  }

  /** One write for a batch of outcomes; each waiting attempt hears whether its outcome was applied. */
  private record(batch: PendingOutcome[]): void {
    this.app.writes
      .run((trx) => settleLeasedDeliveries(trx, batch.map((pending) => pending.outcome), Date.now()))
      .then(
        (applied) => batch.forEach((pending, i) => pending.resolve(applied[i] === true)),
        (error: unknown) => batch.forEach((pending) => pending.reject(error)),
      );
  }

  private start(delivery: DueDelivery, leasedUntil: number): void {
    const endpoint = delivery.endpoint_id;
    this.perEndpoint.set(endpoint, (this.perEndpoint.get(endpoint) ?? 0) + 1);
    this.sending += 1;
    const answered = () => {
      this.sending -= 1;
      const left = (this.perEndpoint.get(endpoint) ?? 1) - 1;
      if (left === 0) this.perEndpoint.delete(endpoint);
      else this.perEndpoint.set(endpoint, left);
      this.pump();
    };
    const attempt = this.attempt({ delivery, leasedUntil }, answered)
      .catch((error: unknown) => this.app.log.error({ err: error, delivery_id: delivery.id }, "webhook attempt could not be recorded"))
      .finally(() => this.inFlight.delete(delivery.id));
    this.inFlight.set(delivery.id, attempt);
  }

  /** Sends, frees the send's place in the limits (`answered`), then records the outcome. */
  private async attempt(leased: DeliveryWithLease, answered: () => void): Promise<void> {
    const { delivery } = leased;
    const attemptedAt = new Date();
    let outcome: AttemptOutcome;
    try {
      outcome = await this.send(delivery, attemptedAt);
    } finally {
      answered();
    }
    if (outcome.statusCode === null && this.cancel.signal.aborted) {
      // Cut by shutdown: no outcome to record; the row is due again at once on the next start.
      await this.app.writes.run((trx) => releaseLease(trx, delivery.id, leased.leasedUntil));
      return;
    }
    await this.settle(leased, outcome, attemptedAt);
  }

  private async send(delivery: DueDelivery, now: Date): Promise<AttemptOutcome> {
    let secrets: string[];
    try {
      secrets = signingSecrets(this.secrets, delivery.endpoint_id, delivery, now.toISOString());
    } catch {
      return { delivered: false, statusCode: null, durationMs: 0, error: "the endpoint's signing secret cannot be decrypted (master key changed?)", responseExcerpt: null };
    }
    const headers = webhookHeaders(secrets, delivery.payload, delivery.event_id, now);
    return postWebhook({ url: delivery.url, mode: delivery.mode, rules: this.app.targets.known(), body: delivery.payload, headers }, this.app.config.webhookTimeoutMs, this.cancel.signal, this.connections);
  }

  /** Logs the attempt and moves the delivery on: succeeded, pending until the next retry, or dead. */
  private async settle({ delivery, leasedUntil }: DeliveryWithLease, outcome: AttemptOutcome, attemptedAt: Date): Promise<void> {
    const attempt = delivery.attempts + 1;
    const retryDelay = outcome.delivered ? undefined : this.app.config.webhookRetryScheduleMs[attempt - 1];
    const status = outcome.delivered ? "succeeded" : retryDelay === undefined ? "dead" : "pending";
    const leasedOutcome: LeasedOutcome = {
      lease: { id: delivery.id, leasedUntil, attempts: delivery.attempts },
      attempt: {
        id: newAttemptId(),
        delivery_id: delivery.id,
        attempted_at: attemptedAt.toISOString(),
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        response_excerpt: outcome.responseExcerpt,
      },
      update: { status, attempts: attempt, retryDelayMs: retryDelay ?? null },
    };
    const applied = await new Promise<boolean>((resolve, reject) => {
      this.outcomes.push({ outcome: leasedOutcome, resolve, reject });
      this.pump();
    });
    // Not applied: the delivery was replayed meanwhile and is due again with a fresh schedule.
    if (!applied) return;
    this.app.metrics.webhookAttempt(status);
    const fields = { delivery_id: delivery.id, event_id: delivery.event_id, endpoint_id: delivery.endpoint_id, attempt, status_code: outcome.statusCode, duration_ms: outcome.durationMs, error: outcome.error };
    if (status === "dead") this.app.log.warn(fields, "webhook delivery dead-lettered after its last retry");
    else this.app.log.debug({ ...fields, status }, "webhook attempt");
  }
}

interface PendingOutcome {
  outcome: LeasedOutcome;
  resolve(applied: boolean): void;
  reject(error: unknown): void;
}

interface DeliveryWithLease {
  delivery: DueDelivery;
  leasedUntil: number;
}
