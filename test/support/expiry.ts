/**
 * A card expiry `yearsAhead` years from today, so tests never start failing when a
 * fixed year passes (a card expiring 01/2030 is expired in February 2030).
 */
export function futureExpiry(yearsAhead = 3): { exp_month: number; exp_year: number } {
  return { exp_month: 12, exp_year: new Date().getUTCFullYear() + yearsAhead };
}
