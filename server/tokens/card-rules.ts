/**
 * Card checks done before a number is ever stored (CONTRACT §4). Pure functions, so
 * every rule is unit-tested on its own.
 */

/** Digits only: spaces and dashes a person typed are dropped, anything else is kept to fail. */
export function normalizeCardNumber(input: string): string {
  return input.replace(/[\s-]/g, "");
}

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

export type CardBrand = "visa" | "mastercard" | "amex" | "discover" | "diners" | "jcb" | "unionpay" | "unknown";

/** Brand by issuer identification number ranges. */
const BRAND_RANGES: ReadonlyArray<[CardBrand, number, number, number]> = [
  // brand, prefix length, from, to (inclusive)
  ["amex", 2, 34, 34],
  ["amex", 2, 37, 37],
  ["diners", 3, 300, 305],
  ["diners", 2, 36, 36],
  ["diners", 2, 38, 39],
  ["jcb", 4, 3528, 3589],
  ["discover", 4, 6011, 6011],
  ["discover", 3, 644, 649],
  ["discover", 2, 65, 65],
  ["unionpay", 2, 62, 62],
  ["mastercard", 2, 51, 55],
  ["mastercard", 4, 2221, 2720],
  ["visa", 1, 4, 4],
];

export function cardBrand(digits: string): CardBrand {
  for (const [brand, length, from, to] of BRAND_RANGES) {
    const prefix = Number(digits.slice(0, length));
    if (prefix >= from && prefix <= to) return brand;
  }
  return "unknown";
}

/** A card is valid through the last day of its expiry month. */
export function isExpired(expMonth: number, expYear: number, now: Date = new Date()): boolean {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth() + 1;
  return expYear < year || (expYear === year && expMonth < month);
}

/** Two-digit years mean this century: 29 -> 2029. */
export function fullYear(year: number): number {
  return year < 100 ? 2000 + year : year;
}

export function cvcLength(brand: CardBrand): number {
  return brand === "amex" ? 4 : 3;
}
