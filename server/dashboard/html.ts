/** Markup that is already safe: built by `html`, never from a caller's string. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function renderPart(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(renderPart).join("");
  return escapeHtml(String(part));
}

/**
 * The only way pages make markup: every interpolated value is escaped unless it is
 * `Html` itself, so data from the database (a description, a URL, a receiver's
 * answer) can never become markup.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] as string;
  values.forEach((value, i) => {
    out += renderPart(value) + (strings[i + 1] as string);
  });
  return new Html(out);
}
