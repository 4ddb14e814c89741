/**
 * HTML building with escaping by default: `html\`<td>${value}</td>\`` escapes every interpolated
 * value; only a `SafeHtml` (the result of `html`, `raw` or `join`) is inserted as it is. Arrays
 * are joined, null/undefined/false render as nothing. Attribute values must be quoted in the
 * template (`class="${x}"`): escaping covers `&<>"'`, which is enough inside quotes.
 */

const SAFE = Symbol("safe-html");

export interface SafeHtml {
  readonly [SAFE]: true;
  readonly value: string;
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

function isSafe(v: unknown): v is SafeHtml {
  return typeof v === "object" && v !== null && (v as Partial<SafeHtml>)[SAFE] === true;
}

/** Marks trusted markup (our own SVG from Vega, our own CSS) as safe. Never pass user data. */
export function raw(markup: string): SafeHtml {
  return { [SAFE]: true, value: markup };
}

function render(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return "";
  if (isSafe(v)) return v.value;
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(render).join("");
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "—";
  if (typeof v === "boolean") return String(v);
  return escapeHtml(v as string);
}

/** Tagged template: literal parts verbatim, interpolations escaped unless SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? "");
  });
  return raw(out);
}

export function join(parts: readonly HtmlValue[], separator = ""): SafeHtml {
  return raw(parts.map(render).join(separator));
}

/**
 * Makes JSON safe to embed in an inline `<script type="application/json">` block: `<`, `>`,
 * `&` and the JS line separators are written as \u escapes, so `</script>` cannot end the
 * block. The result is still valid JSON.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** System fonts only: the page must not fetch anything. */
export const CHART_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
