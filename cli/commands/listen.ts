import { createHmac } from "node:crypto";
import type { Command } from "commander";
import { EVENT_TYPES, type Event } from "../../server/events/event";
import { webhookHeaders } from "../../server/webhooks/signature";
import { UsageError } from "../exit";
import { resolveRemote, withRemoteOptions, type Remote, type RemoteFlags } from "../http-client";

interface ListenFlags extends RemoteFlags {
  forwardTo?: string;
  events?: string;
  printSecret?: boolean;
}

/** How long a forwarded event may take, as for webhook deliveries. */
const FORWARD_TIMEOUT_MS = 10_000;
const RECONNECT_MS = 1_000;

/**
 * The secret `listen` signs forwards with: an HMAC of the API key under a fixed label,
 * so it is the same on every run with that key and unknown to anyone without it.
 */
export function listenSigningSecret(apiKey: string): string {
  return `whsec_${createHmac("sha256", apiKey).update("paygate listen forwarding secret v1").digest("hex").slice(0, 40)}`;
}

function parseTypes(text: string | undefined): string[] {
  if (text === undefined) return [];
  const types = text.split(",").map((t) => t.trim()).filter(Boolean);
  const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) throw new UsageError(`unknown event type ${unknown.join(", ")}; one of ${EVENT_TYPES.join(", ")}`);
  return types;
}

function parseForwardUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return url.href;
  } catch {
    // reported below
  }
  throw new UsageError(`--forward-to "${text}" is not an http(s) URL`);
}

interface Forwarded {
  status: number | null;
  duration_ms: number;
  error?: string;
}

/** POSTs the event's exact bytes with the headers a webhook delivery carries. */
async function forward(url: string, secret: string, id: string, payload: string): Promise<Forwarded> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(url, { method: "POST", headers: webhookHeaders([secret], payload, id, new Date()), body: payload, signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, duration_ms: elapsed() };
  } catch (error) {
    const cause = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message;
    return { status: null, duration_ms: elapsed(), error: cause };
  }
}

function printEvent(json: boolean | undefined, event: Event, forwarded: Forwarded | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ event, ...(forwarded && { forward: forwarded }) })}\n`);
    return;
  }
  const paymentId = typeof event.data.id === "string" ? event.data.id : "-";
  const forwardText = forwarded ? `  --> ${forwarded.status ?? `failed (${forwarded.error})`} in ${forwarded.duration_ms} ms` : "";
  process.stdout.write(`${event.created_at}  ${event.type.padEnd(18)}  ${event.id}  ${paymentId}${forwardText}\n`);
}

/** One server-sent event: its id and data, as `listen` needs them. */
interface SseMessage {
  id: string | undefined;
  data: string;
}

/** Splits an SSE byte stream into messages (the subset the server sends: id, event, data, comments). */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) id = line.slice(4);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length > 0) yield { id, data: data.join("\n") };
    }
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follows the stream until `signal` aborts. A dropped connection reconnects with the
 * last id received, so the server sends exactly what was missed; an event is
 * acknowledged (its id kept) only once printed and forwarded.
 */
async function follow(remote: Remote, flags: ListenFlags, types: string[], forwardTo: string | undefined, signal: AbortSignal): Promise<void> {
  const secret = listenSigningSecret(remote.apiKey);
  const query = types.length > 0 ? `?types=${encodeURIComponent(types.join(","))}` : "";
  let lastId: string | undefined;
  let announced = false;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${remote.apiKey}`, accept: "text/event-stream" };
      if (lastId) headers["last-event-id"] = lastId;
      const res = await fetch(`${remote.baseUrl}/v1/events/stream${query}`, { headers, signal });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
        const message = body?.error?.message ?? `the server answered ${res.status}`;
        // Wrong key or scope will not fix itself: stop instead of retrying forever.
        if (res.status === 401 || res.status === 403) throw new UsageError(message);
        process.stderr.write(`paygate: ${message}; retrying\n`);
      } else {
        if (!announced) {
          process.stderr.write(`Ready! Listening for ${types.length > 0 ? types.join(", ") : "all"} events of ${remote.baseUrl}${forwardTo ? `, forwarding to ${forwardTo}` : ""} (Ctrl-C to stop)\n`);
          announced = true;
        } else {
          process.stderr.write("Reconnected.\n");
        }
        for await (const message of sseMessages(res.body)) {
          const event = JSON.parse(message.data) as Event;
          const forwarded = forwardTo ? await forward(forwardTo, secret, event.id, message.data) : undefined;
          printEvent(flags.json, event, forwarded);
          lastId = message.id ?? event.id;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof UsageError) throw error;
      process.stderr.write(`paygate: connection to ${remote.baseUrl} lost (${(error as Error).message}); reconnecting\n`);
    }
    await sleep(RECONNECT_MS, signal);
  }
}

export function registerListen(program: Command): void {
  withRemoteOptions(program.command("listen").description("Print the merchant's events as they happen, and forward them signed to a local URL"))
    .option("--forward-to <url>", "POST each event here, signed like a webhook delivery (X-Service-Signature)")
    .option("--events <types>", `only these comma-separated types (${EVENT_TYPES.join(", ")})`)
    .option("--print-secret", "print the signing secret of the forwards and exit")
    .action(async (flags: ListenFlags) => {
      const remote = resolveRemote(flags);
      if (flags.printSecret) {
        process.stdout.write(`${listenSigningSecret(remote.apiKey)}\n`);
        return;
      }
      const types = parseTypes(flags.events);
      const forwardTo = parseForwardUrl(flags.forwardTo);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        await follow(remote, flags, types, forwardTo, stop.signal);
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
}
