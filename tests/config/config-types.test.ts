/**
 * The config types are inferred from the schema (config/types.ts), not written by hand. These
 * are type-level assertions, enforced by `npm run typecheck` (tsc reads tests/): the defaults the
 * resolver fills from other keys come out without `| undefined`, the keys that stay optional
 * keep it, and the benchmark section still is a Workload. The runtime half checks that the
 * values behind those types are really filled.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Workload } from "../../vocabulary/workload.js";
import { parseStackConfig } from "../../config/schema.js";
import type {
  CheckConnector,
  PasswordState,
  Platform,
  ResourceAmounts,
  StackConfig,
  Toleration,
  ValkeyMode,
} from "../../config/types.js";

describe("config types inferred from the schema", () => {
  it("the resolver fills zones, ioThreads, storageClass and workloadName, and the inferred types say so (types checked by tsc)", () => {
    expectTypeOf<StackConfig["aws"]["region"]>().toEqualTypeOf<string>();
    expectTypeOf<StackConfig["aws"]["zones"]>().toEqualTypeOf<string[]>();
    expectTypeOf<StackConfig["valkey"]["ioThreads"]>().toEqualTypeOf<number>();
    expectTypeOf<StackConfig["benchmark"]["workloadName"]>().toEqualTypeOf<string>();
    expectTypeOf<StackConfig["valkey"]["persistence"]["storageClass"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<StackConfig["karpenter"]["nodePool"]["instanceTypes"]>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<StackConfig["byo"]["kubeconfig"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<StackConfig["valkey"]["resourceAmounts"]["limits"]>().toEqualTypeOf<ResourceAmounts>();
    expectTypeOf<ResourceAmounts>().toEqualTypeOf<{ cpuMillicores: number; memoryBytes: number }>();
    expectTypeOf<StackConfig["karpenter"]["nodePool"]["permittedInstanceTypes"]>().toEqualTypeOf<string[]>();
    expectTypeOf<Platform>().toEqualTypeOf<"eks" | "byo">();
    expectTypeOf<ValkeyMode>().toEqualTypeOf<"replication" | "cluster">();
    expectTypeOf<CheckConnector>().toEqualTypeOf<"port-forward" | "direct">();
    expectTypeOf<PasswordState>().toEqualTypeOf<"secret" | "plaintext" | "missing">();
    expectTypeOf<Toleration["operator"]>().toEqualTypeOf<"Equal" | "Exists">();
    expectTypeOf<Toleration["key"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<
      Omit<
        StackConfig["benchmark"],
        | "enabled"
        | "workloadName"
        | "resources"
        | "resourceAmounts"
        | "clientPods"
        | "runId"
        | "mixImage"
        | "loadgenImage"
      >
    >().toEqualTypeOf<Omit<Workload, "name">>();

    const { config } = parseStackConfig({ "aws:region": "eu-west-1", "valkey": { mode: "cluster" } });
    expect(config.aws).toEqual({ region: "eu-west-1", zones: ["eu-west-1a", "eu-west-1b", "eu-west-1c"] });
    expect(config.valkey.ioThreads).toBe(1);
    expect(config.valkey.persistence.storageClass).toBe("gp3");
    expect(config.benchmark.workloadName).toBe("cluster");
  });
});
