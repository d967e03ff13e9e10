import { z } from "zod";
import { findCardToken, insertCardToken } from "../../store/card-tokens";
import type { Db } from "../../store/database";
import type { CardTokenRow } from "../../store/schema";
import type { AppContext } from "../app-context";
import type { CardData } from "../connectors/connector";
import { testCard } from "../connectors/mock/test-cards";
import { ApiError, errors } from "../errors";
import { isoNow, randomAlphanumeric } from "../ids";
import type { Actor } from "../keys/actor";
import type { Cipher } from "../secrets/cipher";
import { cardBrand, cvcLength, fullYear, isExpired, normalizeCardNumber, passesLuhn } from "./card-rules";
import { toCardToken, type CardToken } from "./card-token";

export const tokenizeBody = z.strictObject({
  card: z.strictObject({
    number: z.string().max(40),
    exp_month: z.number().int(),
    exp_year: z.number().int(),
    cvc: z.string().max(10),
    zip: z.string().max(20).optional(),
  }),
});

export type TokenizeInput = z.output<typeof tokenizeBody>;

export const panAad = (token: string) => `pan:${token}`;

/**
 * Checks a card and exchanges it for a merchant- and mode-scoped token. The number is
 * stored encrypted with the master key; the CVC is checked and dropped.
 */
export async function tokenizeCard(app: Pick<AppContext, "db" | "cipher">, actor: Actor, input: TokenizeInput): Promise<CardToken> {
  const { card } = input;
  const number = normalizeCardNumber(card.number);
  if (!/^\d{12,19}$/.test(number) || !passesLuhn(number)) throw errors.invalid("card[number]", "The card number is not a valid card number.");
  if (card.exp_month < 1 || card.exp_month > 12) throw errors.invalid("card[exp_month]", "exp_month must be 1 to 12.");
  const expYear = fullYear(card.exp_year);
  if (expYear < 2000 || expYear > 2100) throw errors.invalid("card[exp_year]", "exp_year must be a 4-digit year.");
  if (isExpired(card.exp_month, expYear)) throw errors.invalid("card[exp_year]", "The card has expired.");
  const brand = cardBrand(number);
  if (!new RegExp(`^\\d{${cvcLength(brand)}}$`).test(card.cvc)) {
    throw errors.invalid("card[cvc]", `The CVC must be ${cvcLength(brand)} digits for this card.`);
  }
  if (card.zip !== undefined && !/^\d{5}$/.test(card.zip)) throw errors.invalid("card[zip]", "The ZIP must be 5 digits.");
  if (actor.mode === "test" && !testCard(number)) {
    throw new ApiError(400, "test_card_required", "Test mode only accepts the sandbox test cards (e.g. 4242 4242 4242 4242); real card numbers never enter a sandbox.", {
      param: "card[number]",
    });
  }
  const token = `tok_${actor.mode}_${randomAlphanumeric(24)}`;
  const row: CardTokenRow = {
    token,
    merchant_id: actor.merchantId,
    mode: actor.mode,
    pan_encrypted: app.cipher.encrypt(number, panAad(token)),
    bin_prefix: number.slice(0, 6),
    last4: number.slice(-4),
    exp_month: card.exp_month,
    exp_year: expYear,
    card_brand: brand,
    created_at: isoNow(),
  };
  await insertCardToken(app.db, row);
  return toCardToken(row);
}

export interface UsableToken {
  row: CardTokenRow;
  /** Decrypts the number for one connector call; never keep the result. */
  card(): CardData;
}

/** The caller's token, or 404 `token_not_found` (another merchant's or mode's looks the same). */
export async function loadToken(db: Db, cipher: Cipher, actor: Actor, token: string): Promise<UsableToken> {
  const row = await findCardToken(db, actor.merchantId, actor.mode, token);
  if (!row) throw new ApiError(404, "token_not_found", `No such token: ${token}.`, { param: "gateway_token" });
  return {
    row,
    card: () => ({ number: cipher.decrypt(row.pan_encrypted, panAad(row.token)), expMonth: row.exp_month, expYear: row.exp_year }),
  };
}
