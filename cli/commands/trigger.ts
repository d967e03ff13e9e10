import type { Command } from "commander";
import { TEST_CARDS } from "../../server/connectors/mock/test-cards";
import { EVENT_TYPES, type EventType } from "../../server/events/event";
import { OperationError, UsageError } from "../exit";
import { apiFailure, callRaw, resolveRemote, withRemoteOptions, type Remote, type RemoteFlags } from "../http-client";

interface TriggerFlags extends RemoteFlags {
  override: string[];
}

const APPROVED = TEST_CARDS.find((c) => c.declineCode === undefined)?.number as string;
const DECLINED = TEST_CARDS.find((c) => c.declineCode === "generic_decline")?.number as string;

/** A created object, as the API answered it, with what made it. */
interface Step {
  request: string;
  status: number;
  object: unknown;
}

/**
 * `field=value` onto the new payment's body: a top-level value is read as JSON when it
 * parses (`amount=500`), else as text; `metadata.key=value` sets one metadata entry.
 */
export function applyOverrides(body: Record<string, unknown>, overrides: readonly string[]): Record<string, unknown> {
  const result: Record<string, unknown> = { ...body };
  for (const override of overrides) {
    const at = override.indexOf("=");
    if (at <= 0) throw new UsageError(`--override "${override}" is not field=value`);
    const field = override.slice(0, at);
    const value = override.slice(at + 1);
    const [head, ...rest] = field.split(".");
    if (rest.length > 0) {
      const nested = { ...((result[head as string] as Record<string, unknown> | undefined) ?? {}) };
      nested[rest.join(".")] = value;
      result[head as string] = nested;
      continue;
    }
    try {
      result[field] = JSON.parse(value);
    } catch {
      result[field] = value;
    }
  }
  return result;
}

async function step(remote: Remote, steps: Step[], path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { status, body: object } = await callRaw(remote, "POST", path, body);
  if (status >= 400) throw apiFailure(status, object);
  steps.push({ request: `POST ${path}`, status, object });
  return object as Record<string, unknown>;
}

async function tokenize(remote: Remote, steps: Step[], number: string): Promise<string> {
  const card = { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: "123" };
  return (await step(remote, steps, "/v1/tokens", { card })).token as string;
}

/** The real calls that make the server record `type`, in order. */
async function produce(remote: Remote, type: EventType, overrides: readonly string[]): Promise<Step[]> {
  const steps: Step[] = [];
  const payment = (token: string, captureMethod?: "manual") =>
    applyOverrides({ amount: 1000, currency: "usd", gateway_token: token, description: `paygate trigger ${type}`, ...(captureMethod && { capture_method: captureMethod }) }, overrides);
  switch (type) {
    case "payment.authorized": {
      await step(remote, steps, "/v1/payments/authorize", payment(await tokenize(remote, steps, APPROVED), "manual"));
      break;
    }
    case "payment.captured": {
      const authorized = await step(remote, steps, "/v1/payments/authorize", payment(await tokenize(remote, steps, APPROVED), "manual"));
      await step(remote, steps, "/v1/payments/capture", { payment_id: authorized.id });
      break;
    }
    case "payment.refunded": {
      const sold = await step(remote, steps, "/v1/payments/sale", payment(await tokenize(remote, steps, APPROVED)));
      await step(remote, steps, "/v1/payments/refund", { payment_id: sold.id });
      break;
    }
    case "payment.voided": {
      const authorized = await step(remote, steps, "/v1/payments/authorize", payment(await tokenize(remote, steps, APPROVED), "manual"));
      await step(remote, steps, "/v1/payments/void", { payment_id: authorized.id });
      break;
    }
    case "payment.failed": {
      const token = await tokenize(remote, steps, DECLINED);
      const declined = await callRaw(remote, "POST", "/v1/payments/authorize", payment(token));
      // The decline is the point: the API answers it as an error naming the failed payment.
      const failedPayment = (declined.body as { error?: { payment_id?: string } } | undefined)?.error?.payment_id;
      if (declined.status < 400 || !failedPayment) throw new OperationError(`expected the test card to be declined with a failed payment, the server answered ${declined.status}`);
      steps.push({ request: "POST /v1/payments/authorize", status: declined.status, object: declined.body });
      break;
    }
  }
  return steps;
}

export function registerTrigger(program: Command): void {
  withRemoteOptions(program.command("trigger").description("Make the real API calls that produce an event, in test mode"))
    .argument("<event-type>", EVENT_TYPES.join(" | "))
    .option("--override <field=value>", "set a field of the new payment (amount=500, currency=eur, metadata.order=42); repeatable", (v: string, all: string[]) => [...all, v], [])
    .action(async (type: string, flags: TriggerFlags) => {
      if (!(EVENT_TYPES as readonly string[]).includes(type)) throw new UsageError(`unknown event type ${type}; one of ${EVENT_TYPES.join(", ")}`);
      const remote = resolveRemote(flags);
      // Triggering moves real money with a live key: test keys only.
      if (!remote.apiKey.startsWith("sk_test_")) throw new UsageError("trigger needs a test secret key (sk_test_…)");
      const steps = await produce(remote, type as EventType, flags.override);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ event_type: type, steps }, null, 2)}\n`);
        return;
      }
      for (const s of steps) process.stdout.write(`${s.request} -> ${s.status}\n${JSON.stringify(s.object, null, 2)}\n`);
      process.stderr.write(`Triggered ${type}.\n`);
    });
}
