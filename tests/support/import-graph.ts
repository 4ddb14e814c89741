/**
 * The project's import graph by layer: every relative import (type-only and dynamic ones too,
 * read with TypeScript's own pre-processor) between the product's files, checked against the
 * layer order, plus the import cycles between files (Tarjan's strongly connected components).
 * `npm run graph [root]` prints the layer-to-layer counts, every upward import and every cycle,
 * and exits 1 when there is one; tests/stacks/import-graph.test.ts holds the project to zero.
 * tests/ is not a layer: tests may import anything.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

/** Bottom to top: a file may import from its own layer or any layer below it, never above. */
export const LAYERS = [
  "versions.ts",
  "vocabulary",
  "config",
  "pod",
  "core",
  "benchmarks",
  "harness",
  "components",
  "stacks",
  "apps",
] as const;
/**
 * Layers that must stay free of Pulumi and the Kubernetes client: the pods' files, the domain core,
 * the measurement and the local process harness (everything below components/).
 */
export const PLATFORM_FREE: readonly string[] = LAYERS.slice(0, LAYERS.indexOf("components"));
const PLATFORM_PACKAGE = /^(@pulumi\/|@kubernetes\/client-node$)/;

export interface ImportGraph {
  /** Repo-relative file → repo-relative files it imports (product files only). */
  edges: Map<string, string[]>;
  /** Repo-relative file → the packages it imports. */
  packages: Map<string, string[]>;
}

export interface GraphReport {
  /** "from -> to" layer pairs with their import counts (own-layer imports left out). */
  layerCounts: Record<string, number>;
  upward: string[];
  cycles: string[][];
  platformImports: string[];
  /**
   * Folder knots: sets of folders of one layer (`core/drill`, `components/valkey`, …; a file
   * directly in a layer is its own `<layer>/<file>`) that import each other in a cycle. With none,
   * the folders inside each layer read bottom to top like the layers.
   */
  folderKnots: string[][];
}

export function layerOf(file: string): string | undefined {
  const top = file.split("/")[0] ?? "";
  return (LAYERS as readonly string[]).includes(top) ? top : undefined;
}

function productFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const p = dir === "" ? e.name : `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|mts)$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(p);
    }
  };
  for (const layer of LAYERS) {
    const abs = join(root, layer);
    if (!existsSync(abs)) continue;
    if (statSync(abs).isDirectory()) walk(layer);
    else out.push(layer);
  }
  return out.sort();
}

function resolveImport(root: string, from: string, spec: string): string | undefined {
  const base = normalize(join(dirname(from), spec)).replace(/\.(js|ts|mjs|mts)$/, "");
  for (const candidate of [`${base}.ts`, `${base}.mts`, `${base}/index.ts`])
    if (existsSync(join(root, candidate))) return candidate;
  return undefined;
}

export function readImportGraph(root: string): ImportGraph {
  const edges = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const file of productFiles(root)) {
    const info = ts.preProcessFile(readFileSync(join(root, file), "utf8"), true, true);
    const specs = info.importedFiles.map((f) => f.fileName);
    edges.set(
      file,
      specs.filter((s) => s.startsWith(".")).flatMap((s) => resolveImport(root, file, s) ?? []),
    );
    packages.set(
      file,
      specs.filter((s) => !s.startsWith(".")),
    );
  }
  return { edges, packages };
}

/** Strongly connected components of more than one file (or a file importing itself). */
export function cyclesOf(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(scc.sort());
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** A file's folder one level inside its layer (`core/drill/x.ts` → `core/drill`); undefined outside the layers. */
export function folderOf(file: string): string | undefined {
  const parts = file.split("/");
  if (layerOf(file) === undefined || parts.length < 2) return undefined;
  return parts.slice(0, 2).join("/");
}

/** The folder graph's cycles, within each layer (imports between layers are the layer check's). */
export function folderKnotsOf(g: ImportGraph): string[][] {
  const edges = new Map<string, string[]>();
  for (const [from, tos] of g.edges) {
    const a = folderOf(from);
    if (a === undefined) continue;
    for (const to of tos) {
      const b = folderOf(to);
      if (b === undefined || b === a || layerOf(from) !== layerOf(to)) continue;
      const list = edges.get(a) ?? [];
      if (!list.includes(b)) list.push(b);
      edges.set(a, list);
    }
  }
  return cyclesOf(edges);
}

export function analyseGraph(g: ImportGraph): GraphReport {
  const rank = (l: string | undefined) => (l === undefined ? -1 : (LAYERS as readonly string[]).indexOf(l));
  const layerCounts: Record<string, number> = {};
  const upward: string[] = [];
  for (const [from, tos] of g.edges) {
    for (const to of tos) {
      const [a, b] = [layerOf(from), layerOf(to)];
      if (a === b) continue;
      const key = `${a} -> ${b}`;
      layerCounts[key] = (layerCounts[key] ?? 0) + 1;
      if (rank(b) > rank(a)) upward.push(`${from} -> ${to}`);
    }
  }
  const platformImports = [...g.packages].flatMap(([file, pkgs]) =>
    PLATFORM_FREE.includes(layerOf(file) ?? "")
      ? pkgs.filter((p) => PLATFORM_PACKAGE.test(p)).map((p) => `${file} -> ${p}`)
      : [],
  );
  return {
    layerCounts,
    upward: upward.sort(),
    cycles: cyclesOf(g.edges),
    platformImports,
    folderKnots: folderKnotsOf(g),
  };
}

export function formatReport(r: GraphReport): string {
  const lines = [`layers, bottom to top: ${LAYERS.join(" < ")}`, "imports between layers:"];
  for (const k of Object.keys(r.layerCounts).sort()) lines.push(`  ${k}: ${r.layerCounts[k]}`);
  lines.push(`upward imports: ${r.upward.length}`, ...r.upward.map((u) => `  ${u}`));
  lines.push(`import cycles: ${r.cycles.length}`, ...r.cycles.map((c) => `  ${c.join(" <-> ")}`));
  lines.push(
    `Pulumi / Kubernetes client imports below components/: ${r.platformImports.length}`,
    ...r.platformImports.map((p) => `  ${p}`),
  );
  lines.push(`folder knots: ${r.folderKnots.length}`, ...r.folderKnots.map((k) => `  ${k.join(" <-> ")}`));
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const root = resolve(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), "..", ".."));
  const report = analyseGraph(readImportGraph(root));
  console.log(`${relative(process.cwd(), root) || "."}:\n${formatReport(report)}`);
  process.exitCode =
    report.upward.length + report.cycles.length + report.platformImports.length + report.folderKnots.length > 0 ? 1 : 0;
}
