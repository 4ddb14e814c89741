/**
 * The scale ladder in the report: scale-ladder.json read through its schema (bad keys named), the chart's points
 * and legend exponents, the exponent table's super-linear flag, and the rendered page from a directory holding only
 * the ladder.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSource, ReportLoadError } from "../../benchmarks/report/load.js";
import { renderReport } from "../../benchmarks/report/render.js";
import { exponentRows, scaleData, stepExponent } from "../../benchmarks/report/scale-section.js";
import { LADDER_STEPS, SCALE_LADDER_FILE, type LadderFile } from "../../benchmarks/scale/ladder-file.js";

const scratch = mkdtempSync(join(tmpdir(), "vbench-scale-report-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A ladder whose steps grow exactly as P^k: start 0.5, bootstrap 1, verify 2 (super-linear), failover 0, scaleOut and
 * scaleIn 1, heal 1.
 */
function ladder(sizes: number[] = [3, 10, 30, 100]): LadderFile {
  const k = { start: 0.5, bootstrap: 1, verify: 2, failover: 0, scaleOut: 1, scaleIn: 1, heal: 1 } as const;
  return {
    measuredAt: "2026-11-30T04:00:00.000Z",
    valkeyVersion: "9.1.2",
    machine: { cpuModel: "test cpu", cpus: 2, memoryGiB: 8, os: "Linux", node: "v24" },
    replicasPerPrimary: 1,
    nodeTimeoutMs: 15000,
    rungs: sizes.map((p) => {
      const ms = Object.fromEntries(
        LADDER_STEPS.map((s) => [s, 100 * (p / 3) ** k[s]]),
      ) as LadderFile["rungs"][0]["ms"];
      return {
        primaries: p,
        nodes: 2 * p,
        killed: Math.ceil(p / 10),
        ms,
        samples: Object.fromEntries(LADDER_STEPS.map((s) => [s, [ms[s] * 0.9, ms[s] * 1.1]])) as never,
        writes: { acked: 1000, lost: p === 100 ? 3 : 0, lostPerShard: {}, oldestLostMsBeforeKill: null },
        heal: { restartMs: 50 * p, scriptsMs: 60 * p, keys: 20 * p, missing: 0 },
        // Not run at 100 (bench:scale --reshard-up-to).
        ...(p === 100
          ? {}
          : {
              reshard: {
                outMoveMs: 20 * p,
                inMoveMs: 25 * p,
                keysMoved: 2000 * p,
                bytesMoved: 2000 * p * 1006,
                serverBytesIn: 2100 * p * 1006,
                keysMovedBack: 2000 * p,
                serverBytesBack: 2050 * p * 1006,
                writer: {
                  acked: 5000,
                  lost: p === 30 ? 2 : 0,
                  failed: 1,
                  unexpected: 0,
                  longestPauseMs: 10 * p,
                  failures: ["TRYAGAIN"],
                },
                dataMissing: 0,
              },
            }),
      };
    }),
  };
}

function dirWith(name: string, body: unknown): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, SCALE_LADDER_FILE), typeof body === "string" ? body : JSON.stringify(body));
  return dir;
}

describe("the scale ladder in the report", () => {
  it("loads a directory holding only scale-ladder.json", () => {
    const s = loadSource(dirWith("only-ladder", ladder()));
    expect(s.scaleLadder?.rungs.map((r) => r.primaries)).toEqual([3, 10, 30, 100]);
    expect(s.rows).toEqual([]);
    expect(s.describe.join("\n")).toContain("scale ladder: 3, 10, 30, 100 primaries × (1 + 1)");
  });

  it("names the key of a malformed file, and refuses sizes out of order and non-JSON", () => {
    const broken = ladder() as unknown as { rungs: { ms: Record<string, unknown> }[] };
    delete broken.rungs[1]?.ms.heal;
    expect(() => loadSource(dirWith("broken", broken))).toThrow(ReportLoadError);
    expect(() => loadSource(dirWith("broken", broken))).toThrow(
      /scale-ladder\.json: not a scale ladder file.*rungs\.1\.ms\.heal/,
    );
    const unordered = ladder([10, 3]);
    expect(() => loadSource(dirWith("unordered", unordered))).toThrow(/rungs\.1\.primaries: sizes must ascend/);
    expect(() => loadSource(dirWith("garbage", "{ not json"))).toThrow(/scale-ladder\.json: not JSON/);
  });

  it("fits each step's exponent and puts it in the legend; a step that took no time has no point", () => {
    const f = ladder();
    expect(stepExponent(f, "bootstrap")).toBeCloseTo(1, 6);
    expect(stepExponent(f, "verify")).toBeCloseTo(2, 6);
    f.rungs[0]!.ms.heal = 0;
    expect(stepExponent(f, "heal")).toBeNull();
    const data = scaleData({
      title: "t",
      generatedAt: "x",
      sources: [{ ...loadSource(dirWith("d", ladder())), scaleLadder: f }],
    });
    expect(new Set(data.map((d) => d.series))).toEqual(
      new Set([
        "start (k = 0.50)",
        "bootstrap (k = 1.00)",
        "verify (k = 2.00)",
        "failover (k = 0.00)",
        "scaleOut (k = 1.00)",
        "scaleIn (k = 1.00)",
        "heal",
      ]),
    );
    expect(data.filter((d) => d.step === "heal").map((d) => d.primaries)).toEqual([10, 30, 100]);
    const b = data.find((d) => d.step === "bootstrap" && d.primaries === 100)!;
    expect(b.seconds).toBeCloseTo((100 * 100) / 3 / 1000, 6);
    expect([b.min, b.max].map((x) => x / b.seconds)).toEqual([expect.closeTo(0.9, 6), expect.closeTo(1.1, 6)]);
  });

  it("flags a step above k 1.2 between the two largest sizes, and only that one", () => {
    const rows = exponentRows(ladder());
    expect(rows.filter((r) => r.superLinear).map((r) => r.step)).toEqual(["verify"]);
    expect(rows.find((r) => r.step === "bootstrap")?.pairs).toEqual(["3→10: 1.00", "10→30: 1.00", "30→100: 1.00"]);
  });

  it("renders the chart and tables in report.html, titled for what the directory holds", async () => {
    const page = await renderReport([loadSource(dirWith("page", ladder()))], new Date("2026-11-30T05:00:00Z"));
    expect(page).toContain("<title>Valkey benchmark: cost as the cluster grows</title>");
    expect(page).toContain('id="scale"');
    expect(page).toMatch(/<figure class="chart" data-chart="scale-ladder">[\s\S]*<svg/);
    expect(page).toContain("bootstrap (k = 1.00)");
    expect(page).toMatch(/<tr data-step="verify">.*super-linear \(k &gt; 1.2\)/);
    expect(page).not.toMatch(/<tr data-step="bootstrap">.*super-linear/);
    expect(page).toContain("2 runs per size");
    // Resharding at 30 primaries: 2000 × 30 keys of 1006 bytes moved in 0.6 s, 2 writes lost (red); not run at 100.
    const reshard = /<table class="scale-reshard">[\s\S]*?<\/table>/.exec(page)?.[0] ?? "";
    expect(reshard).toContain(
      '<td class="num">57.6 MB (60.4 MB)</td><td class="num">0.60 s</td><td class="num">95.9 MB/s</td>',
    );
    expect(reshard).toContain('<td class="num">300 ms</td>');
    expect(reshard).toContain('<tr><td class="num">100</td><td colspan="10">not run at this size');
    expect(reshard.match(/class="num fail"/g)).toHaveLength(1);
    expect(page).not.toContain('id="side-by-side"');
  });
});
