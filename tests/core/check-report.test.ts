/**
 * The topology check report's one schema (core/verify/check-report.ts) against reports the
 * verifier produced: the fixture run's raw/verify-<mode>.json (a real `npm run local` against
 * valkey-server processes), read as written and as the check report the stack outputs carry.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { topologyCheckReportSchema, verifierReportJsonSchema } from "../../core/verify/check-report.js";
import { toCheckReport } from "../../core/verify/to-check-report.js";
import type { TopologyReport } from "../../core/verify/verify-types.js";
import { LOCAL_RUN_DIR } from "../support/report-fixtures.js";

const written = (mode: "cluster" | "replication"): { before: TopologyReport; after: TopologyReport } =>
  JSON.parse(readFileSync(join(LOCAL_RUN_DIR, "raw", `verify-${mode}.json`), "utf8")) as {
    before: TopologyReport;
    after: TopologyReport;
  };

describe("the topology check report schema", () => {
  for (const mode of ["cluster", "replication"] as const) {
    it(`${mode}: parses the verifier's report as written and as the check report, which it leaves unchanged`, () => {
      const { before, after } = written(mode);
      for (const r of [before, after]) {
        expect(verifierReportJsonSchema.safeParse(r).error).toBeUndefined();
        const check = toCheckReport(r);
        const parsed = topologyCheckReportSchema.safeParse(check);
        expect(parsed.error).toBeUndefined();
        // Nothing stripped or added: the schema declares every field the check report carries.
        expect(parsed.data).toEqual(check);
        expect(parsed.data?.mode).toBe(mode);
        expect(parsed.data?.shards.length).toBeGreaterThan(0);
      }
    });
  }

  it("a check report carries null, never undefined, for what the verifier did not learn (Sentinel fields only under Sentinel)", () => {
    const { after } = written("replication");
    const r: TopologyReport = {
      ...after,
      shards: after.shards.map((s) => ({
        primary: { ...s.primary, zone: undefined, keys: undefined },
        replicas: s.replicas.map((x) => ({ ...x, zone: undefined })),
      })),
      failures: [{ code: "SENTINEL_QUORUM", message: "no quorum", node: undefined }],
      masterName: "valkey",
      sentinels: [{ address: "10.0.0.9:26379", zone: undefined, reachable: false, agrees: false, error: "refused" }],
    };
    const check = toCheckReport(r);
    expect(topologyCheckReportSchema.parse(check)).toEqual(check);
    expect(check.shards[0]?.primary).toMatchObject({ zone: null, keys: null });
    expect(check.failures).toEqual([{ code: "SENTINEL_QUORUM", message: "no quorum" }]);
    expect(check.sentinels).toEqual([
      { address: "10.0.0.9:26379", zone: null, reachable: false, agrees: false, primary: null },
    ]);
    expect(check.masterName).toBe("valkey");
    expect("sentinels" in toCheckReport(after)).toBe(false);
  });

  it("rejects a report with a field of the wrong type, naming the field", () => {
    const check = toCheckReport(written("cluster").after);
    const bad = JSON.parse(JSON.stringify(check)) as { shards: { primary: { keys: unknown } }[] };
    bad.shards[1]!.primary.keys = "42";
    const parsed = topologyCheckReportSchema.safeParse(bad);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["shards.1.primary.keys"]);
    // The same field, absent in the verifier's JSON, must still be a number when present.
    const raw = JSON.parse(JSON.stringify(written("cluster").after)) as typeof bad;
    raw.shards[1]!.primary.keys = "42";
    expect(verifierReportJsonSchema.safeParse(raw).error?.issues.map((i) => i.path.join("."))).toEqual([
      "shards.1.primary.keys",
    ]);
  });
});
