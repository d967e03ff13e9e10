/**
 * The sandbox's five test cards (spec "Sandbox behaviour", CONTRACT §4). The number
 * decides the outcome; any future expiry, any CVC and any ZIP are accepted.
 */
export interface TestCard {
  number: string;
  brand: "visa";
  /** `undefined`: approved. Otherwise the decline's `connector_code`. */
  declineCode?: "generic_decline" | "insufficient_funds" | "expired_card" | "incorrect_cvc";
  message: string;
}

export const TEST_CARDS: readonly TestCard[] = [
  { number: "4242424242424242", brand: "visa", message: "Approved." },
  { number: "4000000000000002", brand: "visa", declineCode: "generic_decline", message: "The card was declined." },
  { number: "4000000000009995", brand: "visa", declineCode: "insufficient_funds", message: "The card has insufficient funds." },
  { number: "4000000000000069", brand: "visa", declineCode: "expired_card", message: "The card has expired." },
  { number: "4000000000000127", brand: "visa", declineCode: "incorrect_cvc", message: "The card's security code is incorrect." },
];

const BY_NUMBER = new Map(TEST_CARDS.map((card) => [card.number, card]));

export function testCard(number: string): TestCard | undefined {
  return BY_NUMBER.get(number);
}
