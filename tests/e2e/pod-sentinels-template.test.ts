/**
 * The e2e stand-in starts each Sentinel from the pod's own files with the release's settings read
 * back from its ConfigMap's sentinel.conf (support/pod-sentinels.ts): what it reads is what the
 * pod's renderer wrote.
 */
import { describe, expect, it } from "vitest";
import { renderSentinelConf } from "../../pod/sentinel-conf.js";
import { sentinelTemplateOptions } from "./support/pod-sentinels.js";

describe("the stand-in reads the release's sentinel.conf", () => {
  const template = renderSentinelConf({
    port: 26379,
    dir: "/data",
    masterName: "valkey-primary",
    primary: { host: "valkey-0.valkey-headless.ns.svc.cluster.local", port: 6379 },
    quorum: 2,
    downAfterMs: 5000,
    failoverTimeoutMs: 60_000,
    parallelSyncs: 1,
    hostnames: true,
  });

  it("master name, primary, quorum and every timing, as rendered", () => {
    expect(sentinelTemplateOptions(template, "valkey-sentinel-0")).toEqual({
      masterName: "valkey-primary",
      primaryDns: "valkey-0.valkey-headless.ns.svc.cluster.local",
      primaryPort: 6379,
      quorum: 2,
      timings: { downAfterMs: 5000, failoverTimeoutMs: 60_000, parallelSyncs: 1 },
    });
  });

  it("a template without a timing line: an error naming the pod and the line", () => {
    const without = template.replace(/^sentinel failover-timeout .*$/m, "");
    expect(() => sentinelTemplateOptions(without, "valkey-sentinel-1")).toThrow(
      "valkey-sentinel-1: sentinel.conf has no 'sentinel failover-timeout valkey-primary' line",
    );
  });
});
