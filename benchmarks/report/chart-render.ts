/**
 * Vega-Lite spec → static SVG, in Node, at report time: compile with vega-lite, run the
 * dataflow in a headless vega View (renderer "none", nothing drawn to a canvas) and serialise
 * the scenegraph with `toSVG()`. The SVG is inlined into the page, so ids are prefixed per
 * chart to keep two charts' clip paths and gradients from resolving to each other. Vega is loaded on the first
 * chart, not with the module: every `vbench` command imports this file, and most draw no chart.
 */
import type * as Vega from "vega";
import type { TopLevelSpec } from "vega-lite";

export class ChartRenderError extends Error {
  constructor(chart: string, cause: unknown) {
    super(`chart ${chart}: ${(cause as Error).message ?? String(cause)}`, { cause });
    this.name = "ChartRenderError";
  }
}

/** Prefixes every `id="…"` and every `#…` reference to it (url(#…), href="#…"). */
export function prefixSvgIds(svg: string, prefix: string): string {
  const ids = new Set([...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1] as string));
  if (ids.size === 0) return svg;
  return svg
    .replace(/(\sid=")([^"]+)"/g, (_m, a: string, id: string) => `${a}${prefix}${id}"`)
    .replace(/url\(#([^)]+)\)/g, (m, id: string) => (ids.has(id) ? `url(#${prefix}${id})` : m))
    .replace(/(href=")#([^"]+)"/g, (m, a: string, id: string) => (ids.has(id) ? `${a}#${prefix}${id}"` : m));
}

/** Renders one chart; `name` (a-z, 0-9, -) names errors and prefixes ids. */
export async function renderChartSvg(name: string, spec: TopLevelSpec): Promise<string> {
  let view: Vega.View | undefined;
  try {
    const [vega, { compile }] = await Promise.all([import("vega"), import("vega-lite")]);
    const compiled = compile(spec).spec;
    view = new vega.View(vega.parse(compiled), { renderer: "none" });
    const svg = await view.toSVG();
    return prefixSvgIds(svg, `${name}-`);
  } catch (err) {
    throw new ChartRenderError(name, err);
  } finally {
    view?.finalize();
  }
}
