import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { versions } from "../../versions.js";
import { configIssues } from "../support/stack-config.js";

describe("config drills: defaults", () => {
  it("is off by default, with the primary fault and the pinned load image", () => {
    expect(parseStackConfig({}).config.drills).toEqual({
      enabled: false,
      faults: ["primary"],
      rate: 50,
      preFaultS: 10,
      loadS: 90,
      zoneDownS: 30,
      timeoutS: 600,
      image: versions.DRILL_LOAD_IMAGE,
    });
    expect(versions.DRILL_LOAD_IMAGE).toMatch(/^public\.ecr\.aws\/docker\/library\/node:24\./);
  });

  it("keeps the faults in the order written", () => {
    const { config } = parseStackConfig({
      drills: { enabled: true, faults: ["zone", "primary", "switchover"], runId: "r1" },
    });
    expect(config.drills.faults).toEqual(["zone", "primary", "switchover"]);
    expect(config.drills.runId).toBe("r1");
  });
});

describe("config drills: each bad value names its key", () => {
  it.each([
    ["an unknown fault", { drills: { faults: ["primary", "network"] } }, "drills.faults.1", "primary"],
    ["a fault listed twice", { drills: { faults: ["primary", "primary"] } }, "drills.faults.1", "listed twice"],
    ["no fault", { drills: { faults: [] } }, "drills.faults", "at least 1"],
    ["a rate of 0", { drills: { rate: 0 } }, "drills.rate", "1"],
    ["an empty runId", { drills: { runId: "" } }, "drills.runId", "non-empty"],
    ["an unknown key", { drills: { faultz: [] } }, "drills.faultz", "unknown key"],
    ["alertsFrom not a URL", { drills: { alertsFrom: "localhost:9090" } }, "drills.alertsFrom", "http(s) URL"],
    ["alertsFrom not http(s)", { drills: { alertsFrom: "ftp://prom:21/" } }, "drills.alertsFrom", "http(s) URL"],
    [
      "upgrade (a deployed upgrade is a real `pulumi up` with a new image)",
      { drills: { faults: ["primary", "upgrade"] } },
      "drills.faults.1",
      "upgrade cannot run in the deployed stack: a deployed upgrade is a real change",
    ],
  ])("%s", (_name, raw, path, fragment) => {
    const p = configIssues(raw).find((x) => x.path === path);
    expect(p, JSON.stringify(configIssues(raw))).toBeDefined();
    expect(p!.message).toContain(fragment);
  });
});

describe("config drills: cross-field rules", () => {
  it("drills.enabled needs checks.verify (recovery is the verifier passing)", () => {
    const p = configIssues({ drills: { enabled: true }, checks: { verify: false }, valkey: { mode: "cluster" } });
    expect(p.map((x) => x.path)).toEqual(["drills.enabled"]);
    expect(p[0]!.message).toContain("needs checks.verify: true");
  });

  it("the zone fault needs ≥ 2 zones", () => {
    const p = configIssues({
      drills: { enabled: true, faults: ["zone"] },
      aws: { zones: ["us-west-2a"] },
      valkey: { replication: { replicas: 0, sentinel: { replicas: 1, quorum: 1 } } },
      checks: { verify: true },
    });
    expect(p.find((x) => x.path === "drills.faults")?.message).toContain("zone needs ≥ 2 zones in aws.zones (got 1)");
  });

  it("the load must run at least 10 s past the fault", () => {
    const p = configIssues({ drills: { enabled: true, preFaultS: 20, loadS: 25 } });
    expect(p.map((x) => x.path)).toEqual(["drills.loadS"]);
    expect(p[0]!.message).toContain("use at least 30");
  });

  it("freeze and partition are accepted, and the load must outlast their hold (failure detection + 5 s) by 10 s", () => {
    const { config } = parseStackConfig({
      drills: { enabled: true, faults: ["freeze", "partition"], preFaultS: 3, loadS: 23 },
    });
    expect(config.drills.faults).toEqual(["freeze", "partition"]);
    // Replication's default down-after is 5 s: held 10 s, so 3 + 10 + 10 = 23 is the least.
    const p = configIssues({ drills: { enabled: true, faults: ["primary", "partition"], preFaultS: 3, loadS: 22 } });
    expect(p.map((x) => x.path)).toEqual(["drills.loadS"]);
    expect(p[0]!.message).toContain(
      "22 s leaves less than 10 s of load after partition, which holds 10 s (failure detection 5000 ms + 5 s) after drills.preFaultS 3 s; use at least 23",
    );
  });

  it("the load's records must fit the pod log (rate × loadS per stream)", () => {
    const p = configIssues({ drills: { enabled: true, rate: 500, loadS: 61 } });
    expect(p.map((x) => x.path)).toEqual(["drills.rate"]);
    expect(p[0]!.message).toContain("500 writes/s × drills.loadS 61 s is over 30000 writes per stream");
    expect(configIssues({ drills: { enabled: true, rate: 500, loadS: 60 } })).toEqual([]);
  });

  it("applies no drill rule while drills are off", () => {
    expect(
      configIssues({
        drills: { enabled: false, preFaultS: 20, loadS: 25 },
        checks: { verify: false },
        valkey: { mode: "cluster" },
      }),
    ).toEqual([]);
  });
});
