import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Duplex } from "node:stream";
import type { Mode } from "../connectors/connector";
import type { WebhookTargets } from "./targets";
import { addressRefusal, hostRefusal, portOf, selfRefusal, targetRefusal, type TargetRules } from "./url-policy";

/** One webhook POST, fully prepared (signed body and headers). */
export interface WebhookRequest {
  url: string;
  /** The endpoint's mode decides which addresses it may reach. */
  mode: Mode;
  /** The server's limits: paygate's own address, loopback on a production server. */
  rules?: TargetRules | undefined;
  body: string;
  headers: Record<string, string>;
}

/** What one attempt came to; `statusCode` is null when no answer arrived. */
export interface AttemptOutcome {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
}

const EXCERPT_BYTES = 500;

class RefusedAddressError extends Error {}

/** Idle connections kept per target are closed after this long. */
const IDLE_MS = 15_000;
/** Targets with an agent; past this the pool is emptied, so distinct URLs cannot grow it without bound. */
const MAX_AGENTS = 1_000;

/** An agent's `createConnection`, in the form that hands the socket to a callback. */
type Connect = (options: http.ClientRequestArgs, callback: (error: Error | null, socket?: Duplex) => void) => Duplex | undefined;

/**
 * Keep-alive agents, one per target (scheme, host, port) and mode: deliveries to one
 * endpoint reuse their connections. The agent opens a new connection with the
 * request's guarded look-up, so every peer is checked when its connection opens; a
 * connection opened under test-mode rules is never lent to a live-mode request.
 *
 * With `targets`, a test-mode connection also reads the production rules afresh as it
 * opens (another process may have marked the database since), and once this process
 * learns of the mark, the connections opened before it are never reused.
 */
export class WebhookConnections {
  private readonly agents = new Map<string, http.Agent>();
  /** Agents whose connections were opened before the database was known to be production. */
  private readonly retired = new Set<http.Agent>();
  /** `hostRefusal` of each target: a function of the URL's host, port and mode alone. */
  private readonly refusals = new Map<string, string | undefined>();

  constructor(private readonly targets?: WebhookTargets) {
    targets?.production.onLearned(() => this.retire());
  }

  hostRefusal(url: URL, mode: Mode, rules: TargetRules | undefined): string | undefined {
    const key = `${mode} ${rules?.self?.port} ${rules?.refuseLoopback} ${url.host}`;
    if (this.refusals.has(key)) return this.refusals.get(key);
    if (this.refusals.size >= MAX_AGENTS) this.refusals.clear();
    const refusal = hostRefusal(url, mode, rules);
    this.refusals.set(key, refusal);
    return refusal;
  }

  agentFor(url: URL, mode: Mode): http.Agent {
    const key = `${mode} ${url.protocol}//${url.host}`;
    let agent = this.agents.get(key);
    if (!agent) {
      if (this.agents.size >= MAX_AGENTS) this.close();
      const options = { keepAlive: true, timeout: IDLE_MS, scheduling: "lifo" as const };
      agent = url.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
      // Live mode refuses loopback whatever the environment: only test mode can change.
      if (this.targets && mode === "test") checkEachConnection(agent, mode, this.targets);
      this.agents.set(key, agent);
    }
    return agent;
  }

  /**
   * Stops lending the connections opened so far: their idle ones close now, the busy
   * ones when their send ends, and later sends open new ones under the current rules.
   */
  private retire(): void {
    for (const agent of this.agents.values()) {
      for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
      this.retired.add(agent);
    }
    this.agents.clear();
    this.refusals.clear();
  }

  /** Closes every kept connection. */
  close(): void {
    for (const agent of [...this.agents.values(), ...this.retired]) agent.destroy();
    this.agents.clear();
    this.retired.clear();
    this.refusals.clear();
  }
}

/**
 * Reads the target rules afresh for each connection `agent` opens, before it opens:
 * the host as written (an IP literal is never looked up) and every address a name
 * resolves to are judged by them.
 */
function checkEachConnection(agent: http.Agent, mode: Mode, targets: WebhookTargets): void {
  const open = agent.createConnection.bind(agent) as (options: http.ClientRequestArgs) => Duplex;
  const connect: Connect = (options, callback) => {
    targets.current().then(
      (rules) => {
        const port = Number(options.port);
        const refusal = targetRefusal(options.host ?? "", port, mode, rules);
        if (refusal) return callback(new RefusedAddressError(`refused: ${refusal}`));
        let socket: Duplex;
        try {
          socket = open({ ...options, lookup: guardedLookup(mode, port, rules) });
        } catch (error) {
          return callback(error as Error);
        }
        callback(null, socket);
      },
      // Unread, the rules may be production's: nothing is sent.
      () => callback(new RefusedAddressError("refused: paygate could not read its database's production setting")),
    );
    return undefined;
  };
  (agent as unknown as { createConnection: Connect }).createConnection = connect;
}

/**
 * Resolves the host and refuses the connection when any address it resolves to is not
 * allowed. Checking inside the socket's own look-up means the checked address is the
 * one connected to: a DNS answer cannot change between the check and the connect.
 */
export function guardedLookup(mode: Mode, port?: number, rules?: TargetRules): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      for (const { address } of addresses) {
        const refusal = (port !== undefined && selfRefusal(address, port, rules?.self)) || addressRefusal(address, mode, rules?.refuseLoopback);
        if (refusal) return callback(new RefusedAddressError(`refused: ${hostname} resolves to ${address}, ${refusal}`), "");
      }
      const first = addresses[0];
      if (options.all) return callback(null, addresses);
      if (!first) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "");
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Sends one webhook. Never throws: every failure (refused target, timeout, connection
 * error) is an outcome. 2xx is delivered; anything else is a failed attempt. Redirects
 * are not followed (they count as non-2xx). `timeoutMs` bounds the whole exchange;
 * `cancel` cuts it short (shutdown); `connections` keeps connections for reuse.
 */
export function postWebhook(request: WebhookRequest, timeoutMs: number, cancel?: AbortSignal, connections?: WebhookConnections): Promise<AttemptOutcome> {
  const started = performance.now();
  const outcome = (statusCode: number | null, error: string | null, responseExcerpt: string | null): AttemptOutcome => ({
    delivered: statusCode !== null && statusCode >= 200 && statusCode < 300,
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
    responseExcerpt,
  });
  const url = new URL(request.url);
  const refusal = connections ? connections.hostRefusal(url, request.mode, request.rules) : hostRefusal(url, request.mode, request.rules);
  if (refusal !== undefined) return Promise.resolve(outcome(null, `refused: ${refusal}`, null));
  if (request.mode === "live" && url.protocol !== "https:") return Promise.resolve(outcome(null, "refused: live-mode webhooks must use https://", null));

  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    // A timer and a listener rather than AbortSignal.timeout/any: those cost more than
    // the rest of a send to a local receiver.
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error("timed out"));
    }, timeoutMs);
    const onCancel = () => req.destroy(new Error("cancelled"));
    const settle = (result: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      cancel?.removeEventListener("abort", onCancel);
      resolve(result);
    };
    const transport = url.protocol === "https:" ? https : http;
    const req = transport.request(
      url,
      {
        method: "POST",
        headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
        // Without a pool (a one-off test send), a connection of its own.
        agent: connections?.agentFor(url, request.mode) ?? false,
        // Runs for every new connection, pooled or not.
        lookup: guardedLookup(request.mode, portOf(url), request.rules),
      },
      (res) => {
        // The status decides the attempt; the body is only read for the excerpt.
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => settle(outcome(res.statusCode ?? null, null, Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8")));
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= EXCERPT_BYTES) {
            done();
            // A long answer is not read to its end: the connection goes with it.
            res.destroy();
          }
        });
        // Read to its end, the connection goes back to the agent for the next delivery.
        res.on("end", done);
        res.on("close", done);
      },
    );
    req.on("error", (error) => {
      if (cancel?.aborted) return settle(outcome(null, "cancelled: paygate is shutting down", null));
      if (timedOut) return settle(outcome(null, `timed out after ${timeoutMs} ms`, null));
      const message = error instanceof RefusedAddressError ? error.message : `connection failed: ${error.message}`;
      settle(outcome(null, message, null));
    });
    if (cancel?.aborted) onCancel();
    else cancel?.addEventListener("abort", onCancel, { once: true });
    req.end(request.body);
  });
}
