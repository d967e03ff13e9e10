import { z } from "zod";
import { timestamp } from "../ids";
import type { CardTokenRow } from "../../store/schema";

/** The tokenization response (spec "Card token"). Never holds the number or the CVC. */
export const cardTokenSchema = z.object({
  token: z.string(),
  object: z.literal("card_token"),
  bin_prefix: z.string(),
  last4: z.string(),
  exp_month: z.number().int(),
  exp_year: z.number().int(),
  card_brand: z.string(),
  created_at: timestamp,
}).meta({ id: "CardToken" });
export type CardToken = z.infer<typeof cardTokenSchema>;

export const toCardToken = (row: CardTokenRow): CardToken => ({
  token: row.token,
  object: "card_token",
  bin_prefix: row.bin_prefix,
  last4: row.last4,
  exp_month: row.exp_month,
  exp_year: row.exp_year,
  card_brand: row.card_brand,
  created_at: row.created_at,
});
