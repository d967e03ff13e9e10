import { describe, expect, it } from "vitest";
import pino from "pino";
import { createIsoTime } from "../../server/log-time";

describe("the log lines' timestamp", () => {
  it("is what pino's isoTime writes, at every millisecond and across second, day and year boundaries", () => {
    let clock = 0;
    const isoTime = createIsoTime(() => clock);
    const instants = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, Date.UTC(2026, 10, 22, 23, 59, 59, 999), Date.UTC(2026, 10, 23, 0, 0, 0, 0), Date.UTC(2026, 11, 31, 23, 59, 59, 5), Date.UTC(2027, 0, 1), 1_790_000_000_123];
    for (const at of instants) {
      clock = at;
      expect(isoTime()).toBe(`,"time":"${new Date(at).toISOString()}"`);
    }
    for (let at = 1_790_000_000_000; at < 1_790_000_002_000; at += 7) {
      clock = at;
      expect(isoTime()).toBe(`,"time":"${new Date(at).toISOString()}"`);
    }
  });

  it("reads the clock at each line (not once a second)", () => {
    let clock = Date.UTC(2026, 10, 22, 23, 0, 0, 0);
    const isoTime = createIsoTime(() => clock);
    expect(isoTime()).toBe(`,"time":"2026-11-22T23:00:00.000Z"`);
    clock += 250;
    expect(isoTime()).toBe(`,"time":"2026-11-22T23:00:00.250Z"`);
    clock -= 2000;
    expect(isoTime()).toBe(`,"time":"${new Date(clock).toISOString()}"`);
  });

  it("makes lines pino can write, with the same shape as pino's own", () => {
    const lines: string[] = [];
    const logger = pino({ timestamp: createIsoTime() }, { write: (line: string) => lines.push(line) });
    logger.info("hello");
    const line = JSON.parse(lines[0]!) as { time: string };
    expect(Math.abs(Date.parse(line.time) - Date.now())).toBeLessThan(5000);
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});
