/** Plain tables of cells for the terminal and summary.md (the path and read scale-out tables). Pure. */

/**
 * Header, a rule and the body, columns padded to width: the first `left` columns left-aligned, the rest right-aligned.
 */
export function alignedLines(header: readonly string[], body: readonly (readonly string[])[], left: number): string[] {
  const all = [header, ...body];
  const widths = header.map((_, c) => Math.max(...all.map((r) => [...(r[c] ?? "")].length)));
  const line = (r: readonly string[]): string =>
    r.map((cell, c) => (c < left ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)];
}

/** A markdown table, `|` in cells escaped. */
export function markdownLines(header: readonly string[], body: readonly (readonly string[])[]): string[] {
  const cell = (s: string): string => s.replace(/\|/g, "\\|");
  return [
    `| ${header.map(cell).join(" | ")} |`,
    `|${header.map(() => "---").join("|")}|`,
    ...body.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ];
}
