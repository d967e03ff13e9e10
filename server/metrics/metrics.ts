import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { CallContext, Connector, ConnectorResult, Mode } from "../connectors/connector";
import type { Db } from "../../store/database";
import { deliveryBacklog, type DeliveryBacklog } from "../../store/delivery-backlog";

const FOLLOW_ONS = ["capture", "refund", "void"] as const;
/** Processor calls wait on networks and timeouts: the buckets reach past the 30 s default timeout. */
const CALL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/**
 * The process's Prometheus metrics. Label values are route patterns, methods,
 * statuses, connector ids, modes and outcomes: bounded sets, never a merchant, key or
 * payment id. One registry per app context, so servers in one process never mix.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: "paygate_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [this.registry],
  });
  private readonly requestSeconds = new Histogram({
    name: "paygate_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by route pattern and method.",
    labelNames: ["route", "method"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly payments = new Counter({
    name: "paygate_payments_total",
    help: "Payments created or moved by a capture, refund or void, by connector, mode and the status reached.",
    labelNames: ["connector", "mode", "status"] as const,
    registers: [this.registry],
  });
  private readonly connectorCalls = new Counter({
    name: "paygate_connector_calls_total",
    help: "Processor calls by connector, operation and outcome (approved, declined, timeout, error, exception).",
    labelNames: ["connector", "operation", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly connectorSeconds = new Histogram({
    name: "paygate_connector_call_duration_seconds",
    help: "Processor call latency by connector and operation.",
    labelNames: ["connector", "operation"] as const,
    buckets: CALL_BUCKETS,
    registers: [this.registry],
  });
  private readonly webhookDeliveries = new Counter({
    name: "paygate_webhook_delivery_attempts_total",
    help: "Webhook delivery attempts by outcome: delivered, retry (failed, another attempt scheduled) or dead (failed, no attempt left).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly batchSize = new Histogram({
    name: "paygate_group_commit_batch_size",
    help: "Writes committed together by one group commit (one transaction, one fsync).",
    buckets: BATCH_BUCKETS,
    registers: [this.registry],
  });
  private readonly liveInstances = new Gauge({
    name: "paygate_instances",
    help: "Serving instances on this database (this one included), as this instance last counted them; the rate limit is shared out among them.",
    registers: [this.registry],
  });
  private readonly instrumented = new WeakMap<Connector, Connector>();

  /** Counts the requests of this process only; the backlog gauges read the shared database. */
  constructor(db: Db) {
    let backlog: Promise<DeliveryBacklog> | undefined;
    // A scrape starts every collect() in the same tick: the three gauges share one read.
    const read = () => (backlog ??= deliveryBacklog(db, Date.now()).finally(() => (backlog = undefined)));
    const gauge = (name: string, help: string, pick: (b: DeliveryBacklog) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          this.set(pick(await read()));
        },
      });
    gauge("paygate_webhook_dead_letter_deliveries", "Webhook deliveries that exhausted their retries (the dead-letter queue), in the database.", (b) => b.dead);
    gauge("paygate_webhook_pending_deliveries", "Webhook deliveries waiting to be sent or retried, in the database.", (b) => b.pending);
    gauge("paygate_webhook_outbox_lag_seconds", "Age of the oldest due, unsent webhook delivery; 0 when nothing is due.", (b) => b.lagMs / 1000);
  }

  /** Process metrics (CPU, memory, event loop, GC); only for a serving process. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * The label children of each (route, method, status), kept: prom-client validates and
   * hashes the labels on every `labels()` call (about 2.6% of a GET's samples). Route
   * patterns, methods and statuses are few, so the map stays small.
   */
  private readonly requestChildren = new Map<string, { count: { inc(): void }; seconds: { observe(value: number): void } }>();

  request(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let children = this.requestChildren.get(key);
    if (!children) {
      children = { count: this.requests.labels(route, method, String(status)), seconds: this.requestSeconds.labels(route, method) };
      this.requestChildren.set(key, children);
    }
    children.count.inc();
    children.seconds.observe(seconds);
  }

  payment(connector: string, mode: Mode, status: string): void {
    this.payments.labels(connector, mode, status).inc();
  }

  webhookAttempt(status: "succeeded" | "pending" | "dead"): void {
    this.webhookDeliveries.labels(status === "succeeded" ? "delivered" : status === "pending" ? "retry" : "dead").inc();
  }

  instances(live: number): void {
    this.liveInstances.set(live);
  }

  groupCommit(size: number): void {
    this.batchSize.observe(size);
  }

  /** The connector with every call counted and timed; the same wrapper for the same connector. */
  connector(connector: Connector): Connector {
    let wrapped = this.instrumented.get(connector);
    if (!wrapped) {
      wrapped = { ...connector, authorize: this.timed(connector, "authorize") };
      for (const operation of FOLLOW_ONS) wrapped[operation] = this.timed(connector, operation);
      this.instrumented.set(connector, wrapped);
    }
    return wrapped;
  }

  private timed<Op extends "authorize" | (typeof FOLLOW_ONS)[number]>(connector: Connector, operation: Op): Connector[Op] {
    const call = connector[operation].bind(connector) as (req: never, ctx: CallContext) => Promise<ConnectorResult>;
    const timed = async (req: never, ctx: CallContext): Promise<ConnectorResult> => {
      const started = performance.now();
      let outcome = "exception";
      try {
        const result = await call(req, ctx);
        outcome = result.outcome;
        return result;
      } finally {
        this.connectorCalls.labels(connector.id, operation, outcome).inc();
        this.connectorSeconds.labels(connector.id, operation).observe((performance.now() - started) / 1000);
      }
    };
    return timed as Connector[Op];
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
