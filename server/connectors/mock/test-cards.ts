/**
 * The sandbox's test cards (spec "Sandbox behaviour", CONTRACT §4, issue 18). The number
 * decides the outcome; any future expiry, any CVC and any ZIP are accepted. Exported as
 * data so the banner, the README table and the API description list the same cards.
 * Where Stripe has a test card for the same behaviour its number is reused
 * (0119 processing_error, 5126 refund fails); the others are Luhn-valid numbers of the
 * same 4000 0000 0000 xxxx family that Stripe's list does not use.
 */
export interface TestCard {
  number: string;
  brand: "visa";
  /** `undefined`: the authorization is approved. Otherwise the decline's `connector_code`. */
  declineCode?: "generic_decline" | "insufficient_funds" | "expired_card" | "incorrect_cvc";
  /** Behaviour beyond an approval or a decline at authorization. */
  scenario?: MockScenario;
  message: string;
  /** What a developer sees, in one line: the banner and the README show it. */
  outcome: string;
}

export type MockScenario = "timeout" | "processing_error" | "capture_declined" | "refund_declined" | "second_try";

export const TEST_CARDS: readonly TestCard[] = [
  { number: "4242424242424242", brand: "visa", message: "Approved.", outcome: "approved" },
  { number: "4000000000000002", brand: "visa", declineCode: "generic_decline", message: "The card was declined.", outcome: "declined: generic_decline" },
  {
    number: "4000000000009995",
    brand: "visa",
    declineCode: "insufficient_funds",
    message: "The card has insufficient funds.",
    outcome: "declined: insufficient_funds",
  },
  { number: "4000000000000069", brand: "visa", declineCode: "expired_card", message: "The card has expired.", outcome: "declined: expired_card" },
  {
    number: "4000000000000127",
    brand: "visa",
    declineCode: "incorrect_cvc",
    message: "The card's security code is incorrect.",
    outcome: "declined: incorrect_cvc",
  },
  {
    number: "4000000000005043",
    brand: "visa",
    scenario: "timeout",
    message: "The processor did not answer.",
    outcome: "no answer: 504 connector_timeout after PAYGATE_CONNECTOR_TIMEOUT",
  },
  {
    number: "4000000000000119",
    brand: "visa",
    scenario: "processing_error",
    message: "The processor failed to process the request.",
    outcome: "processor error: 502 connector_error, processing_error",
  },
  {
    number: "4000000000002222",
    brand: "visa",
    scenario: "second_try",
    message: "The processor failed this attempt; the retry succeeds.",
    outcome: "processing_error, then approved on a retry with the same Idempotency-Key",
  },
  {
    number: "4000000000003386",
    brand: "visa",
    scenario: "capture_declined",
    message: "The processor declined the capture.",
    outcome: "authorized; the capture is declined: capture_declined",
  },
  {
    number: "4000000000005126",
    brand: "visa",
    scenario: "refund_declined",
    message: "The processor declined the refund.",
    outcome: "approved; a refund is declined: refund_declined",
  },
];

const BY_NUMBER = new Map(TEST_CARDS.map((card) => [card.number, card]));

export function testCard(number: string): TestCard | undefined {
  return BY_NUMBER.get(number);
}
