/** Prints `value` as JSON, or `rows` as an aligned table with `columns`. */
export function printResult(json: boolean | undefined, value: unknown, rows: readonly object[], columns: string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  printTable(rows, columns);
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.join(",");
  return String(value);
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
