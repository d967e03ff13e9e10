import { newRequestId } from "../ids";

/** 1..200 printable ASCII characters (CONTRACT §1); anything else is replaced. */
const ACCEPTABLE = /^[\x20-\x7e]{1,200}$/;

/** The caller's `X-Request-Id` when acceptable, otherwise a new `req_…`. */
export function requestIdFor(header: string | null): string {
  return header !== null && ACCEPTABLE.test(header) ? header : newRequestId();
}
