/**
 * The BenchmarkResults provider as Pulumi runs it: serialized by the closure serializer and
 * evaluated in a separate plain `node` process (no vitest, no tsx loader). Its create must load
 * the TypeScript implementation and reach the real @kubernetes/client-node code; with no API
 * server in this suite, the proof is the client's connection error for an unreachable cluster.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { benchmarkResultsProvider } from "../../components/steps/benchmark-results/component.js";
import { runSerializedProvider, unreachableKubeconfig } from "../support/serialized-provider.js";

const KUBECONFIG = unreachableKubeconfig("KUBE-TOKEN-distinctive-7731");

describe("the serialized BenchmarkResults provider in a plain node process", () => {
  it("loads the implementation and calls the Kubernetes API", async () => {
    const provider = benchmarkResultsProvider();
    const { text } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: false });
    expect(text).not.toContain("KUBE-TOKEN");
    // A program's provider captures the two paths only: the tests' injection point is not in it.
    expect(text).toContain("benchmark-results/implementation.ts");
    expect(text).not.toContain("testDeps");
    const inputs = {
      namespace: "valkey",
      jobName: "vbench",
      kubeconfig: KUBECONFIG,
      mode: "cluster",
      workload: {
        name: "w",
        requests: 1,
        clients: 1,
        pipeline: 1,
        dataSize: 1,
        threads: 1,
        keyspaceLength: 1,
        tests: ["set"],
        minDurationSeconds: 0,
        maxRequests: 1,
      },
      serverVersion: "9.0.2",
      image: "valkey/valkey:9.0.2",
      timeoutSeconds: 1,
    };
    const stdout = await runSerializedProvider(text, [
      `p.create(${JSON.stringify(inputs)})` +
        `.then((r) => console.log("CREATED " + JSON.stringify(r)), (e) => console.log("ERROR " + e.message));`,
    ]);
    expect(stdout).toMatch(/^ERROR cannot read Job valkey\/vbench from the cluster: .*(ECONNREFUSED|fetch failed)/);
  });
});
