/**
 * The report's "When to use which": verdict.ts's lines per comparison, each with where it comes from; unmeasured lines
 * muted.
 */
import { html, type SafeHtml } from "./html.js";
import type { ReportInput } from "./model.js";
import { verdict, verdictInputs } from "./verdict.js";

export function verdictSection(input: ReportInput): SafeHtml | null {
  const comparisons = verdictInputs(input.sources);
  if (comparisons.length === 0) return null;
  const many = comparisons.length > 1;
  return html`<p class="note">Computed from this report's own measurements, not from a rule of thumb: each line names the rows or files it comes from; a line without its measurement says so and how to measure it.</p>
${comparisons.map(
  ({ label, input: i }) => html`${many ? html`<h3>${label}</h3>` : ""}<ul class="verdict" data-verdict="${label}">
${verdict(i).map(
  (l) =>
    html`<li data-topic="${l.topic}" class="${l.measured ? "" : "note"}">${l.topic === "choice" ? html`<strong>${l.text}</strong>` : l.text}${
      l.from.length === 0 ? "" : html` <span class="sub">From: ${l.from.join("; ")}.</span>`
    }</li>\n`,
)}</ul>`,
)}`;
}
