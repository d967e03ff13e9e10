/** Prints `value` as JSON, or `rows` as an aligned table with `columns`. */
export function printResult(json: boolean | undefined, value: unknown, rows: readonly object[], columns: string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  printTable(rows, columns);
}

/**
 * Names, labels and descriptions come from API callers: a control character in one
 * (ESC, CR, LF) would drive the operator's terminal, clear it or forge a table row.
 * They are shown escaped, as JSON would show them.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return printable(value.join(","));
  return printable(String(value));
}

export function printTable(rows: readonly object[], columns: string[]): void {
  if (rows.length === 0) {
    process.stdout.write("(none)\n");
    return;
  }
  const at = (r: object, c: string) => cell((r as Record<string, unknown>)[c]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => at(r, c).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] as number)).join("  ").trimEnd();
  const out = [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => at(r, c))))];
  process.stdout.write(`${out.join("\n")}\n`);
}
