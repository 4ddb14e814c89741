/**
 * The layers hold: no file imports from a layer above its own, no two files import each other
 * (directly or around a loop), no folders of one layer import each other around a loop, and
 * nothing below components/ imports Pulumi or the Kubernetes client
 * (tests/support/import-graph.ts; `npm run graph` prints the same report).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { analyseGraph, folderKnotsOf, formatReport, LAYERS, readImportGraph } from "../support/import-graph.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("import graph", () => {
  it("the project: zero upward imports, zero cycles, no Pulumi or Kubernetes client below components/", () => {
    const report = analyseGraph(readImportGraph(repo));
    const summary = formatReport(report);
    expect(report.upward, summary).toEqual([]);
    expect(report.cycles, summary).toEqual([]);
    expect(report.platformImports, summary).toEqual([]);
    // The layers are really in use (a checker that sees no edges would pass anything).
    expect(report.layerCounts["components -> pod"]).toBeGreaterThan(0);
    expect(report.layerCounts["harness -> pod"]).toBeGreaterThan(0);
    expect(report.layerCounts["benchmarks -> core"]).toBeGreaterThan(0);
    expect(report.layerCounts["apps -> stacks"]).toBeGreaterThan(0);
    expect(report.layerCounts["config -> vocabulary"]).toBeGreaterThan(0);
  });

  it("folder knots: none (the folders inside each layer import each other without a loop)", () => {
    const report = analyseGraph(readImportGraph(repo));
    expect(report.folderKnots, formatReport(report)).toEqual([]);
  });

  it("every layer is type-checked and linted (tsconfig.json includes it)", () => {
    const include = (JSON.parse(readFileSync(join(repo, "tsconfig.json"), "utf8")) as { include: string[] }).include;
    for (const layer of LAYERS) expect(include, layer).toContain(layer.endsWith(".ts") ? layer : `${layer}/**/*.ts`);
  });

  describe("the checker", () => {
    const root = mkdtempSync(join(tmpdir(), "import-graph-"));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const file = (path: string, text: string): void => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    file("config/a.ts", `import type { B } from "../benchmarks/b.js";\nexport const a = 1;\n`);
    file("benchmarks/b.ts", `export type B = number;\nexport const b = () => import("./c.js");\n`);
    file("benchmarks/c.ts", `export { b } from "./b.js";\n`);
    file("pod/p.ts", `import * as pulumi from "@pulumi/pulumi";\nimport { a } from "../config/a.js";\n`);
    file("components/k.ts", `import { a } from "../config/a.js";\n`);

    it("names an upward import (type-only ones too), a cycle (through a dynamic import and a re-export) and Pulumi in pod/", () => {
      const report = analyseGraph(readImportGraph(root));
      expect(report.upward).toEqual(["config/a.ts -> benchmarks/b.ts"]);
      expect(report.cycles).toEqual([["benchmarks/b.ts", "benchmarks/c.ts"]]);
      expect(report.platformImports).toEqual(["pod/p.ts -> @pulumi/pulumi"]);
      expect(report.layerCounts).toEqual({ "config -> benchmarks": 1, "pod -> config": 1, "components -> config": 1 });
    });

    it("names a folder knot inside a layer, not a loop of folders across layers", () => {
      const edges = new Map<string, string[]>([
        ["components/aws/p.ts", ["components/capacity/e.ts"]],
        ["components/capacity/e.ts", ["components/aws/m.ts"]],
        ["components/aws/m.ts", []],
        ["components/x.ts", ["stacks/s.ts"]],
        ["stacks/s.ts", ["components/x.ts"]],
      ]);
      expect(folderKnotsOf({ edges, packages: new Map() })).toEqual([["components/aws", "components/capacity"]]);
    });
  });
});
