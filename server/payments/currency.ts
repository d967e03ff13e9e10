/**
 * ISO 4217 currencies and their minor-unit exponents. Amounts are integers in the
 * minor unit everywhere inside paygate; processors that want decimal strings convert
 * with `toDecimalString`.
 */
const ZERO_DECIMAL = ["bif", "clp", "djf", "gnf", "isk", "jpy", "kmf", "krw", "pyg", "rwf", "ugx", "uyi", "vnd", "vuv", "xaf", "xof", "xpf"];
const THREE_DECIMAL = ["bhd", "iqd", "jod", "kwd", "lyd", "omr", "tnd"];
const TWO_DECIMAL = [
  "aed", "afn", "all", "amd", "ang", "aoa", "ars", "aud", "awg", "azn", "bam", "bbd", "bdt", "bgn", "bmd", "bnd", "bob",
  "brl", "bsd", "btn", "bwp", "byn", "bzd", "cad", "cdf", "chf", "cny", "cop", "crc", "cup", "cve", "czk", "dkk", "dop",
  "dzd", "egp", "ern", "etb", "eur", "fjd", "fkp", "gbp", "gel", "ghs", "gip", "gmd", "gtq", "gyd", "hkd", "hnl", "htg",
  "huf", "idr", "ils", "inr", "irr", "jmd", "kes", "kgs", "khr", "kpw", "kyd", "kzt", "lak", "lbp", "lkr", "lrd", "lsl",
  "mad", "mdl", "mga", "mkd", "mmk", "mnt", "mop", "mru", "mur", "mvr", "mwk", "mxn", "myr", "mzn", "nad", "ngn", "nio",
  "nok", "npr", "nzd", "pab", "pen", "pgk", "php", "pkr", "pln", "qar", "ron", "rsd", "rub", "sar", "sbd", "scr", "sdg",
  "sek", "sgd", "shp", "sle", "sos", "srd", "ssp", "stn", "syp", "szl", "thb", "tjs", "tmt", "top", "try", "ttd", "twd",
  "tzs", "uah", "usd", "uyu", "uzs", "ves", "wst", "xcd", "yer", "zar", "zmw", "zwl",
];

const EXPONENTS: ReadonlyMap<string, number> = new Map([
  ...ZERO_DECIMAL.map((c) => [c, 0] as const),
  ...TWO_DECIMAL.map((c) => [c, 2] as const),
  ...THREE_DECIMAL.map((c) => [c, 3] as const),
]);

/** Lowercased code if it is a known ISO 4217 currency, else undefined. */
export function normalizeCurrency(input: string): string | undefined {
  const code = input.toLowerCase();
  return EXPONENTS.has(code) ? code : undefined;
}

/** Number of minor-unit digits of a known currency (2 when unknown, never reached after validation). */
export function currencyExponent(currency: string): number {
  return EXPONENTS.get(currency.toLowerCase()) ?? 2;
}

/** Minor units to the decimal string processors such as TSYS and NMI expect: 1050 usd -> "10.50", 500 jpy -> "500". */
export function toDecimalString(amount: number, currency: string): string {
  const exponent = currencyExponent(currency);
  if (exponent === 0) return String(amount);
  const digits = String(amount).padStart(exponent + 1, "0");
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/**
 * An amount a person typed ("5.00", "5", "10.5") in minor units, or undefined when it is
 * not a plain decimal number (up to 8 whole digits) or has more decimals than the
 * currency has: 2.9 JPY and 0.001 USD are refused, never rounded or truncated.
 */
export function parseDecimalAmount(text: string, currency: string): number | undefined {
  const exponent = currencyExponent(currency);
  const match = /^(\d{1,8})(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const [, whole = "0", fraction = ""] = match;
  if (fraction.length > exponent) return undefined;
  return Number(whole) * 10 ** exponent + Number(fraction.padEnd(exponent, "0") || "0");
}

/**
 * The inverse of `toDecimalString`, for amounts a processor reports back (it drops
 * digits beyond the currency's; what a person types goes through `parseDecimalAmount`).
 */
export function fromDecimalString(value: string, currency: string): number {
  const exponent = currencyExponent(currency);
  const [whole = "0", fraction = ""] = value.trim().split(".");
  return Number(whole) * 10 ** exponent + Number((fraction + "0".repeat(exponent)).slice(0, exponent) || "0");
}
