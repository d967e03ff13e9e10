import { describe, expect, it } from "vitest";
import { cardBrand, isExpired, normalizeCardNumber, passesLuhn } from "../../server/tokens/card-rules";

describe("card rules", () => {
  it.each([
    ["4242424242424242", true],
    ["4242424242424241", false],
    ["378282246310005", true],
    ["5555555555554444", true],
    ["6011111111111117", true],
    ["0000000000000000", true],
    ["1234567812345678", false],
  ])("Luhn of %s is %s", (number, valid) => {
    expect(passesLuhn(number)).toBe(valid);
  });

  it.each([
    ["4242424242424242", "visa"],
    ["5555555555554444", "mastercard"],
    ["2223003122003222", "mastercard"],
    ["378282246310005", "amex"],
    ["6011111111111117", "discover"],
    ["3056930009020004", "diners"],
    ["3566002020360505", "jcb"],
    ["6200000000000005", "unionpay"],
    ["9999999999999995", "unknown"],
  ])("brand of %s is %s", (number, brand) => {
    expect(cardBrand(number)).toBe(brand);
  });

  it("strips spaces and dashes only", () => {
    expect(normalizeCardNumber("4242 4242-4242 4242")).toBe("4242424242424242");
    expect(normalizeCardNumber("4242.4242")).toBe("4242.4242");
  });

  it("treats a card as valid through the end of its expiry month", () => {
    const now = new Date("2026-11-21T12:00:00Z");
    expect(isExpired(11, 2026, now)).toBe(false);
    expect(isExpired(10, 2026, now)).toBe(true);
    expect(isExpired(1, 2027, now)).toBe(false);
    expect(isExpired(12, 2025, now)).toBe(true);
  });
});
