/**
 * Real Karpenter against the e2e control plane: the controllers of sigs.k8s.io/karpenter at
 * KARPENTER_CORE_VERSION with their kwok cloud provider (its `kwok/` main package, built by
 * .ci/toolchain/install.sh). Karpenter's scheduling simulation, batching, NodePool requirements,
 * limits and disruption are the real ones; only the cloud differs: a NodeClaim becomes a Node object
 * (annotated for kwok, which then runs its pods) instead of an EC2 instance. So the NodePool points at a
 * KWOKNodeClass, not the EC2NodeClass, and the instance types come from a file this module writes.
 *
 * The instance types are the ones the project's capacity model knows (config/instance-types.ts), each
 * offered on demand in every zone at the price table's us-east-1 price (benchmarks/cost/prices.json).
 * Their capacity is the model's allocatable plus what kwok reserves itself (100m, 10Mi): Karpenter
 * then sees for pods exactly what the model assumes is left after the EKS AMI's reserves and the
 * add-on DaemonSets, so what this compares is the decisions (how many nodes, which types, where), not
 * the reserve arithmetic, which stays the model's (and AWS's).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { allocatableFor, INSTANCE_CAPACITY } from "../../../config/instance-types.js";
import { loadPriceTable } from "../../../benchmarks/cost/prices.js";
import { trackChild } from "../../../core/util/process-reaper.js";
import { freePort } from "../../../harness/local/ports.js";
import { pollUntil } from "../../../core/util/poll-until.js";
import { toolchainDirs } from "../../support/toolchain.js";

export const KARPENTER_KWOK_BIN = join(toolchainDirs["karpenter-kwok"], "bin", "karpenter-kwok");
export const KWOK_NODECLASS_CRD = join(
  toolchainDirs["karpenter-kwok"],
  "crds",
  "karpenter.kwok.sh_kwoknodeclasses.yaml",
);

/** What the kwok provider reserves on every instance type (kwok/cloudprovider/helpers.go, newInstanceType). */
const KWOK_KUBE_RESERVED = { cpuMillicores: 100, memoryBytes: 10 * 2 ** 20 };

/**
 * The price table's region for the offerings: the only one with stored EC2 prices (Karpenter's generated table
 * covers us-east-1 only; prices.json says so). Karpenter picks the cheapest type that fits, so what matters is the
 * order of the prices, not the region of the zones' names.
 */
const PRICE_REGION = "us-east-1";

interface Requirement {
  key: string;
  operator: "In";
  values: string[];
}

/** One entry of the kwok provider's instance-types file (its InstanceTypeOptions JSON). */
export interface KwokInstanceType {
  name: string;
  architecture: "arm64";
  operatingSystems: ["linux"];
  resources: { cpu: string; memory: string; pods: string };
  offerings: Array<{ Price: number; Available: true; Requirements: Requirement[] }>;
}

/** Every instance type the capacity model knows, offered on demand in each of `zones`. Pure. */
export function kwokInstanceTypes(zones: readonly string[]): KwokInstanceType[] {
  const prices = loadPriceTable().regions[PRICE_REGION]?.ec2OnDemandPerHour ?? {};
  return Object.entries(INSTANCE_CAPACITY).map(([name, capacity]) => {
    const a = allocatableFor(name);
    const price = prices[name]?.usd;
    if (a === undefined || price === undefined || price === null)
      throw new Error(`no allocatable or ${PRICE_REGION} price for ${name}`);
    return {
      name,
      architecture: "arm64",
      operatingSystems: ["linux"],
      resources: {
        cpu: `${a.cpuMillicores + KWOK_KUBE_RESERVED.cpuMillicores}m`,
        memory: String(a.memoryBytes + KWOK_KUBE_RESERVED.memoryBytes),
        pods: String(capacity.maxPods),
      },
      offerings: zones.map((zone) => ({
        Price: price,
        Available: true,
        Requirements: [
          { key: "karpenter.sh/capacity-type", operator: "In", values: ["on-demand"] },
          { key: "topology.kubernetes.io/zone", operator: "In", values: [zone] },
        ],
      })),
    };
  });
}

export interface RunningKarpenter {
  /** The controller's log so far (stdout and stderr). */
  log(): string;
  stop(): Promise<void>;
}

/** Starts the controllers out of cluster on `kubeconfigPath`; resolves once their readiness probe answers. */
export async function startKarpenter(o: {
  kubeconfigPath: string;
  dir: string;
  zones: readonly string[];
}): Promise<RunningKarpenter> {
  const typesFile = join(o.dir, "instance-types.json");
  writeFileSync(typesFile, JSON.stringify(kwokInstanceTypes(o.zones), null, 1));
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(KARPENTER_KWOK_BIN, [], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      KUBECONFIG: o.kubeconfigPath,
      INSTANCE_TYPES_FILE_PATH: typesFile,
      DISABLE_LEADER_ELECTION: "true",
      METRICS_PORT: String(metricsPort),
      HEALTH_PROBE_PORT: String(healthPort),
    },
  });
  trackChild(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  let exited = false;
  const exit = new Promise<void>((r) => child.once("exit", () => ((exited = true), r())));
  const tail = () => out.trimEnd().split("\n").slice(-30).join("\n");
  await pollUntil(
    async () => {
      if (exited) throw new Error(`karpenter-kwok exited during start-up:\n${tail()}`);
      const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      return ready ? true : "its /readyz not answering 200 yet";
    },
    { timeoutMs: 90_000, intervalMs: 250, what: "Karpenter's controllers to be ready" },
  );
  return {
    log: () => out,
    stop: async () => {
      if (!exited) child.kill("SIGTERM");
      await exit;
    },
  };
}
