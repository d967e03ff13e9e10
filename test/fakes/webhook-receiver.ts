/**
 * A real webhook receiver for tests: a node:http server on 127.0.0.1 (port 0) that records
 * every POST and answers with a configurable status, or hangs (accepts the request and
 * never answers). Also the signature check a merchant's receiver would run.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  /** `Date.now()` when the body had fully arrived. */
  receivedAt: number;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received (what the signature covers). */
  raw: string;
  /** The status answered, or null when the request was left hanging. */
  answeredWith: number | null;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hooks` */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** TCP connections accepted so far (a refused target must never add one). */
  connections(): number;
  /** TCP connections open now (kept alive by the sender, or in use). */
  openConnections(): number;
  /** Answer the following requests with `status` (and `body`, else a short text). */
  answer(status: number, body?: string): void;
  /** Leave the following requests unanswered. */
  hang(): void;
  /** Drops the connections of requests left hanging. */
  dropHung(): void;
  /** Resolves once `check(received)` holds; rejects after `timeoutMs`. */
  waitUntil(check: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(options: { status?: number } = {}): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hung = new Set<ServerResponse>();
  let behaviour: number | "hang" = options.status ?? 200;
  let answerBody: string | undefined;
  let connections = 0;
  let open = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const answer = behaviour;
      received.push({
        receivedAt: Date.now(),
        path: req.url ?? "",
        headers: req.headers,
        raw: Buffer.concat(chunks).toString("utf8"),
        answeredWith: answer === "hang" ? null : answer,
      });
      if (answer === "hang") {
        hung.add(res);
        return;
      }
      res.writeHead(answer, { "content-type": "text/plain" });
      res.end(answerBody ?? (answer < 300 ? "ok" : `receiver says ${answer}`));
    });
  });
  server.on("connection", (socket) => {
    connections++;
    open++;
    socket.on("close", () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    connections: () => connections,
    openConnections: () => open,
    answer(status, body) {
      behaviour = status;
      answerBody = body;
    },
    hang() {
      behaviour = "hang";
    },
    dropHung() {
      for (const res of hung) res.socket?.destroy();
      hung.clear();
    },
    async waitUntil(check, timeoutMs = 10_000) {
      const start = Date.now();
      while (!check(received)) {
        if (Date.now() - start > timeoutMs) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} received)`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close() {
      if (!server.listening) return Promise.resolve();
      // Hung requests keep their sockets open; close() alone would wait for them forever.
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/**
 * What a merchant's receiver does with `X-Service-Signature` (docs/webhooks.md): every
 * `v1=` is an HMAC-SHA256 of `<t>.<raw body>`; one must match the secret, and `t` must be
 * within the tolerance of now.
 */
export function verifySignature(secret: string, header: string | undefined, raw: string, toleranceSeconds = 300, now = Date.now()): boolean {
  if (!header) return false;
  const parts = header.split(",").map((p) => p.split("=", 2) as [string, string]);
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${raw}`).digest();
  return parts.some(([k, v]) => k === "v1" && /^[0-9a-f]{64}$/.test(v) && timingSafeEqual(Buffer.from(v, "hex"), expected));
}

/** The `v1=` entries of a signature header. */
export const signatureEntries = (header: string | undefined): string[] =>
  (header ?? "").split(",").filter((p) => p.startsWith("v1=")).map((p) => p.slice(3));
