/**
 * Shared plumbing for the processor fakes (stripe-fake.ts, tsys-fake.ts, nmi-fake.ts): a real
 * node:http server on 127.0.0.1 (port 0) that records every request and can be told to
 * misbehave for the next N requests.
 *
 * Failure modes, consumed in request order by the requests they match:
 *   "500"       answers HTTP 500 without handling the request (nothing is charged);
 *   "malformed" answers HTTP 200 with a body the processor's format cannot parse (nothing charged);
 *   "hang"      HANDLES the request (a charge is made, idempotency is recorded) and never answers,
 *               like an answer lost on the way back: the case retries must survive.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type FailMode = "500" | "malformed" | "hang";

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Form fields (bracketed Stripe names stay flat, e.g. `payment_method_data[card][number]`) or parsed JSON. */
  body: Record<string, unknown>;
  /** The body exactly as received. */
  raw: string;
}

export interface FakeReply {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export interface FakeServer {
  baseUrl: string;
  /** Every request received, in order, including ones answered by a failure mode. */
  requests: RecordedRequest[];
  /** Misbehave for the next `n` requests that `only` accepts (default: every request). */
  failNext(mode: FailMode, n?: number, only?: (request: RecordedRequest) => boolean): void;
  close(): Promise<void>;
}

interface FakeSpec {
  handle(request: RecordedRequest): FakeReply;
  /** What "malformed" answers: something the processor's client must refuse to read. */
  malformed: FakeReply;
}

export async function startFakeServer(spec: FakeSpec): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const failures: Array<{ mode: FailMode; only: (request: RecordedRequest) => boolean }> = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const request: RecordedRequest = {
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0] ?? "",
        headers: req.headers,
        body: parseBody(raw, req.headers["content-type"]),
        raw,
      };
      requests.push(request);
      const failureIndex = failures.findIndex((failure) => failure.only(request));
      const failure = failureIndex >= 0 ? failures.splice(failureIndex, 1)[0] : undefined;
      if (failure?.mode === "500") return send(res, { status: 500, contentType: "text/plain", body: "Internal Server Error" });
      if (failure?.mode === "malformed") return send(res, spec.malformed);
      const reply = spec.handle(request);
      if (failure?.mode !== "hang") send(res, reply);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    failNext(mode, n = 1, only = () => true) {
      for (let i = 0; i < n; i++) failures.push({ mode, only });
    },
    close() {
      // Hung requests keep their sockets open; close() alone would wait for them forever.
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function parseBody(raw: string, contentType: string | undefined): Record<string, unknown> {
  if (contentType?.includes("application/json")) {
    try {
      const parsed: unknown = JSON.parse(raw);
      return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

function send(res: ServerResponse, reply: FakeReply): void {
  res.writeHead(reply.status, { "Content-Type": reply.contentType, ...reply.headers });
  res.end(reply.body);
}

/** Form fields are strings; JSON fields may not be. */
export function field(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * The card numbers every fake understands, and the decline class each stands for. Each fake
 * translates the class into its processor's own codes. Any other number is approved.
 */
export const TEST_CARDS = {
  approve: "4242424242424242",
  generic_decline: "4000000000000002",
  insufficient_funds: "4000000000009995",
  expired_card: "4000000000000069",
  incorrect_cvc: "4000000000000127",
} as const;

export type DeclineClass = Exclude<keyof typeof TEST_CARDS, "approve">;

export function declineClassOf(cardNumber: string | undefined): DeclineClass | undefined {
  for (const [name, number] of Object.entries(TEST_CARDS)) {
    if (number === cardNumber && name !== "approve") return name as DeclineClass;
  }
  return undefined;
}

export function last4(cardNumber: string | undefined): string {
  return (cardNumber ?? "").slice(-4);
}
