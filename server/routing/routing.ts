import { z } from "zod";
import type { Db } from "../../store/database";
import { getRouting, putRouting } from "../../store/routing";
import type { ConnectorId, Mode } from "../connectors/connector";
import { CONNECTOR_IDS, CONNECTORS } from "../connectors/registry";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit } from "../audit/record-audit";
import { errors } from "../errors";
import { isoNow, timestamp } from "../ids";

/** A merchant's connector priority for one mode (CONTRACT §6). */
export const routingSchema = z.object({
  object: z.literal("routing"),
  mode: z.enum(["test", "live"]) satisfies z.ZodType<Mode>,
  connectors: z.array(z.enum(CONNECTOR_IDS as [ConnectorId, ...ConnectorId[]])),
  updated_at: timestamp.nullable(),
}).meta({ id: "Routing" });
export type Routing = z.infer<typeof routingSchema>;

export async function getMerchantRouting(db: Db, merchantId: string, mode: Mode): Promise<Routing> {
  const row = await getRouting(db, merchantId, mode);
  return { object: "routing", mode, connectors: (row?.connectors ?? []) as ConnectorId[], updated_at: row?.updated_at ?? null };
}

export async function setMerchantRouting(db: Db, merchantId: string, mode: Mode, connectors: ConnectorId[], by: AuditActor): Promise<Routing> {
  if (new Set(connectors).size !== connectors.length) throw errors.invalid("connectors", "Each connector may appear once.");
  const simulatorOnly = connectors.find((id) => mode === "live" && !CONNECTORS[id].liveCapable);
  if (simulatorOnly) throw errors.invalid("connectors", `${simulatorOnly} is a sandbox simulator and cannot route live payments.`);
  const updatedAt = isoNow();
  await putRouting(db, merchantId, mode, connectors, updatedAt);
  await recordAudit(db, by, { action: "routing.updated", target: { type: "routing", id: mode }, merchantId, mode, details: { mode, connectors } });
  return { object: "routing", mode, connectors, updated_at: updatedAt };
}
