import { z } from "zod";
import type { Db } from "../../store/database";
import { findMerchant, insertMerchant, listMerchants as listMerchantRows } from "../../store/merchants";
import type { MerchantRow } from "../../store/schema";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit } from "../audit/record-audit";
import { ApiError } from "../errors";
import { isoNow, newMerchantShortId, newUuid, timestamp } from "../ids";
import { toPage, type ListPage, type ListParams } from "../pagination";

export const merchantSchema = z.object({
  id: z.uuid(),
  object: z.literal("merchant"),
  short_id: z.string(),
  name: z.string(),
  created_at: timestamp,
}).meta({ id: "Merchant" });
export type Merchant = z.infer<typeof merchantSchema>;

export const toMerchant = (row: MerchantRow): Merchant => ({
  id: row.id,
  object: "merchant",
  short_id: row.short_id,
  name: row.name,
  created_at: row.created_at,
});

export async function createMerchant(db: Db, name: string, by: AuditActor): Promise<Merchant> {
  const row = { id: newUuid(), short_id: newMerchantShortId(), name, created_at: isoNow() };
  await insertMerchant(db, row);
  await recordAudit(db, by, { action: "merchant.created", target: { type: "merchant", id: row.id }, merchantId: row.id, mode: null });
  return toMerchant(row);
}

/** By UUID or `mrc_` short id; 404 `merchant_not_found` otherwise. */
export async function getMerchant(db: Db, idOrShortId: string): Promise<Merchant> {
  const row = await findMerchant(db, idOrShortId);
  if (!row) throw new ApiError(404, "merchant_not_found", `No merchant ${idOrShortId}.`, { param: "merchantId" });
  return toMerchant(row);
}

export async function listMerchants(db: Db, params: ListParams): Promise<ListPage<Merchant>> {
  const after = params.startingAfter === undefined ? undefined : await findMerchant(db, params.startingAfter);
  if (params.startingAfter !== undefined && !after) {
    throw new ApiError(400, "parameter_invalid", `starting_after: no merchant ${params.startingAfter}.`, { param: "starting_after" });
  }
  return toPage(await listMerchantRows(db, params.limit, after), params.limit, toMerchant);
}
