import type { CardTokenRow } from "../../store/schema";

/** The tokenization response (spec "Card token"). Never holds the number or the CVC. */
export interface CardToken {
  token: string;
  object: "card_token";
  bin_prefix: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  card_brand: string;
  created_at: string;
}

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
