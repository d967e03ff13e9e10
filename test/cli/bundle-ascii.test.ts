import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BUNDLE } from "../support/cli";

describe("the bundle", () => {
  // One character outside Latin-1 makes V8 keep the whole source at two bytes per character.
  it("is ASCII only, so V8 holds its source at one byte per character", () => {
    const bytes = readFileSync(BUNDLE);
    const first = bytes.findIndex((byte) => byte > 0x7f);
    expect(first === -1 ? "ascii" : bytes.subarray(Math.max(0, first - 60), first + 20).toString("utf8")).toBe("ascii");
  });
});
