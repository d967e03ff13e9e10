/**
 * Serializes follow-ons (capture, refund, void) on one payment within this process,
 * so the processor is never asked to move the same money twice by racing requests.
 * The conditional update in the store remains the guarantee across processes.
 */
const tails = new Map<string, Promise<unknown>>();

export async function withPaymentLock<T>(paymentId: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(paymentId) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  tails.set(paymentId, tail);
  try {
    return await run;
  } finally {
    if (tails.get(paymentId) === tail) tails.delete(paymentId);
  }
}
