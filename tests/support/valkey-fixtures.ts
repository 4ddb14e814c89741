/**
 * Shared fixtures for the Valkey component tests: a resolved ValkeyConfig with distinctive
 * values (so each assertion proves where a value came from), a Placement, and helpers that run
 * the rendered start script against a real valkey-server in a temporary directory.
 */
import { spawn, type ChildProcess, execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { resolveBinaries } from "../../benchmarks/run/binaries.js";
import { freePort } from "../../harness/local/ports.js";
import { waitForPing } from "../../harness/local/valkey-process.js";
import { openClient } from "../../core/topology/connector.js";
import type { ValkeyConfig } from "../../config/types.js";
import type { Placement } from "../../components/shared.js";
import type { Container, PodSpec, StatefulSet } from "../../components/valkey/k8s-types.js";
import type { RecordedResource } from "./pulumi-mocks.js";
import {
  buildReplicationManifests,
  type ReplicationInput,
  type ReplicationManifests,
} from "../../components/valkey/replication-manifests.js";

/** A password no manifest may contain. */
export const PASSWORD = "Zq9-s3cr3t-\"quote\\slash-$HOME-'tick";

export function valkeyConfig(over: Partial<ValkeyConfig> = {}): ValkeyConfig {
  return {
    namespace: "valkey",
    image: "valkey/valkey:9.0.2",
    mode: "replication",
    replication: {
      replicas: 3,
      minReplicasToWrite: 1,
      minReplicasMaxLag: 7,
      sentinel: { replicas: 3, quorum: 2, downAfterMilliseconds: 4000, failoverTimeoutMs: 45000, parallelSyncs: 2 },
      haproxyImage: "registry.example.com/mirror/haproxy:3.2.4",
    },
    cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 12000 },
    resources: { requests: { cpu: "1", memory: "12Gi" }, limits: { cpu: "2", memory: "16Gi" } },
    resourceAmounts: {
      requests: { cpuMillicores: 1000, memoryBytes: 12 * 2 ** 30 },
      limits: { cpuMillicores: 2000, memoryBytes: 16 * 2 ** 30 },
    },
    persistence: {
      aof: true,
      rdb: true,
      appendfsync: "everysec",
      storageClass: "gp3",
      size: "50Gi",
      sizeBytes: 50 * 2 ** 30,
    },
    replDisklessSyncDelaySeconds: 3,
    ioThreads: 3,
    maxmemory: "75%",
    maxmemoryBytes: 9663676416,
    maxmemoryPolicy: "allkeys-lru",
    auth: { enabled: true },
    pods: 4,
    ...over,
  };
}

export const PLACEMENT: Placement = {
  zones: ["us-west-2a", "us-west-2b", "us-west-2c"],
  nodeSelector: { "karpenter.sh/nodepool": "valkey" },
  tolerations: [{ key: "workload", operator: "Equal", value: "valkey", effect: "NoSchedule" }],
  storageClass: "gp3-valkey",
};

export const run = promisify(execFile);

export function cliPath(): string {
  return resolveBinaries().cli.path;
}

/** Runs valkey-cli/redis-cli with the password only in the environment. */
export async function cli(port: number, args: string[], password?: string): Promise<string> {
  const { REDISCLI_AUTH: _r, VALKEYCLI_AUTH: _v, ...rest } = process.env;
  const env = password === undefined ? rest : { ...rest, REDISCLI_AUTH: password, VALKEYCLI_AUTH: password };
  const { stdout } = await run(cliPath(), ["-h", "127.0.0.1", "-p", String(port), ...args], { env });
  return stdout.trim();
}

/** One command to host:port through the program's own connector (PASSWORD), its reply as a string. */
export async function callNode(host: string, port: number, ...args: string[]): Promise<string> {
  const c = await openClient(host, port, `${host}:${port}`, { password: PASSWORD });
  try {
    return String(await c.call(args[0] as string, ...args.slice(1)));
  } finally {
    c.disconnect();
  }
}

export interface ScriptServer {
  port: number;
  dir: string;
  child: ChildProcess;
  stderr: () => string;
  stop: () => Promise<void>;
}

/** A temp tree like the pod's: data/, run/ (includes), secret/password. */
export function podTree(password: string | undefined): {
  root: string;
  dataDir: string;
  runDir: string;
  passwordFile: string;
} {
  const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-pod-"));
  const passwordFile = join(root, "password");
  if (password !== undefined) writeFileSync(passwordFile, password, { mode: 0o600 });
  return { root, dataDir: join(root, "data"), runDir: join(root, "run"), passwordFile };
}

/** Starts `sh start.sh conf` (the rendered files) with `env`, and waits for PING. */
export async function startWithScript(
  root: string,
  port: number,
  script: string,
  conf: string,
  env: Record<string, string>,
): Promise<ScriptServer> {
  const scriptPath = join(root, "start.sh");
  const confPath = join(root, `valkey-${port}.conf`);
  writeFileSync(scriptPath, script);
  writeFileSync(confPath, conf);
  const child = spawn("sh", [scriptPath, confPath], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  let exited = false;
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exit = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  try {
    await waitForPing("127.0.0.1", port, 15_000, () => exited);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nstderr: ${err}`, { cause: e });
  }
  return {
    port,
    dir: root,
    child,
    stderr: () => err,
    stop: async () => {
      if (!exited) child.kill("SIGKILL");
      await exit;
    },
  };
}

export { freePort, rmSync };

/** A recorded resource's inputs as the plain manifest type it was built from. */
export function manifest<T>(r: RecordedResource): T {
  return r.inputs as T;
}

export function podSpecOf(s: StatefulSet): PodSpec {
  const spec = s.spec?.template.spec;
  if (spec === undefined) throw new Error(`StatefulSet ${s.metadata?.name} has no pod spec`);
  return spec;
}

export function containerOf(s: StatefulSet): Container {
  const c = podSpecOf(s).containers[0];
  if (c === undefined) throw new Error(`StatefulSet ${s.metadata?.name} has no container`);
  return c;
}

/** A replication release "valkey" in namespace "valkey" from valkeyConfig() and PLACEMENT, auth on; `over` replaces fields. */
export function replicationFixture(over: Partial<ReplicationInput> = {}): ReplicationManifests {
  return buildReplicationManifests({
    namespace: "valkey",
    release: "valkey",
    valkey: valkeyConfig(),
    placement: PLACEMENT,
    auth: true,
    ...over,
  });
}
