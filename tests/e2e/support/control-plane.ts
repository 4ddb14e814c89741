/**
 * A real, local Kubernetes control plane for end-to-end tests, on 127.0.0.1 only:
 * etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from k8s.io/kubernetes
 * KUBERNETES_VERSION, plus kwok KWOK_VERSION (both from versions.env) running four fake nodes whose
 * pods become Running/Ready with pod IPs inside 127.0.0.0/8 (so a harness can start real processes on them).
 *
 * Everything comes from `.ci/toolchain/install.sh` (binaries and kwok's own stage YAMLs, cached
 * under ~/.cache/valkey-on-eks/toolchain). Certificates (a CA made at start, a serving certificate
 * for 127.0.0.1/localhost, a service-account key pair) and an admin token are generated per run in
 * a temporary directory that `stop()` removes.
 *
 * Nodes: three Karpenter-Valkey-like nodes (one per zone, labelled `topology.kubernetes.io/zone`
 * and `karpenter.sh/nodepool=valkey`, tainted `workload=valkey:NoSchedule`) and one untainted
 * system node. Volumes: kwok's volume stages act as a provisioner for the default StorageClass
 * (`kwok-volume`, Immediate binding) and for any `extraStorageClasses`, so StatefulSets with
 * volumeClaimTemplates get bound PVCs and run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../../harness/local/ports.js";
import { sleep } from "../../../core/util/poll-until.js";
import { trackChild } from "../../../core/util/process-reaper.js";
import { VALKEY_NODE_POOL, VALKEY_TAINT } from "../../../components/shared.js";
import { ZONE_LABEL } from "../../../vocabulary/labels.js";
import { versions } from "../../../versions.js";
import {
  controlPlanePaths,
  requireControlPlaneToolchain,
  type ControlPlane,
  type ControlPlaneOptions,
  type FakeNode,
} from "./control-plane-types.js";
import { launchControlPlane } from "../../../harness/control-plane/launch.js";
import { makePki, tokenKubeconfig } from "../../../harness/control-plane/pki.js";
import { firstIp, nodeCidrs } from "./control-plane-pki.js";
import { KWOK_STORAGE_CLASS, kwokContainerLogs, kwokStages } from "./kwok-config.js";

export const KUBERNETES_VERSION = versions.KUBERNETES_VERSION;
export const ETCD_VERSION = versions.ETCD_VERSION;
export const KWOK_VERSION = versions.KWOK_VERSION;

export { controlPlanePaths, requireControlPlaneToolchain } from "./control-plane-types.js";

export const FAKE_NODE_ANNOTATION = { key: "kwok.x-k8s.io/node", value: "fake" } as const;
export const DEFAULT_ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"] as const;
/**
 * Pod IPs are real loopback addresses here (the stand-ins bind valkey-server, Sentinel and HAProxy
 * to them), so two control planes running at once (vitest runs e2e files two at a time) must not
 * share a pod CIDR: each vitest worker gets its own /16 (127.64+n.0.0/16, n = VITEST_POOL_ID).
 */
export const DEFAULT_POD_CIDR = `127.${64 + (Number(process.env.VITEST_POOL_ID ?? "0") % 32)}.0.0/16`;
/** Service ClusterIPs are allocated from loopback too: nothing in these tests may send traffic off-host. */
export const DEFAULT_SERVICE_CIDR = "127.96.0.0/16";
export { KWOK_STORAGE_CLASS };
/** Name of the untainted system node. */
export const SYSTEM_NODE = "kwok-system";

export { JOB_POD_RELEASE_LABEL } from "./kwok-config.js";
export type { ControlPlane, ControlPlaneOptions, FakeNode } from "./control-plane-types.js";

interface Proc {
  name: string;
  child: ChildProcess;
  logPath: string;
  exited: Promise<void>;
}

/**
 * Starts the plane and waits until it is usable: etcd healthy, the API server's /readyz, the four
 * nodes Ready without not-ready taints (so the controller manager runs), and the default
 * ServiceAccount present. On failure everything started is stopped and the error carries the tail
 * of every component's log. A port taken between choosing and binding it is retried once.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  requireControlPlaneToolchain();
  try {
    return await startOnce(options);
  } catch (e) {
    if (!(e instanceof Error && /address already in use/.test(e.message))) throw e;
    options.log?.("a chosen port was taken meanwhile; starting again on new ports");
    return startOnce(options);
  }
}

async function startOnce(options: ControlPlaneOptions): Promise<ControlPlane> {
  const log = options.log ?? (() => undefined);
  const zones = [...(options.zones ?? DEFAULT_ZONES)];
  const podCidr = options.podCidr ?? DEFAULT_POD_CIDR;
  const serviceCidr = DEFAULT_SERVICE_CIDR;
  const storageClasses = [KWOK_STORAGE_CLASS, ...(options.extraStorageClasses ?? [])];
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  const dir = mkdtempSync(join(tmpdir(), "vbench-e2e-k8s-"));
  const marker = `VALKEY_ON_EKS_CONTROL_PLANE=${randomBytes(6).toString("hex")}`;
  const procs: Proc[] = [];
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // In stages: kwok and the controllers, then the API server, then etcd (so none logs the
    // loss of the one below it); SIGKILL whatever has not exited 10 s after its SIGTERM.
    const stages = [["kwok", "kube-scheduler", "kube-controller-manager"], ["kube-apiserver"], ["etcd"]];
    for (const names of stages) {
      const group = procs.filter((p) => names.includes(p.name));
      for (const p of group) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM");
      await Promise.race([Promise.all(group.map((p) => p.exited)), sleep(10_000)]);
      for (const p of group) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await Promise.all(group.map((p) => p.exited));
    }
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
  };

  const logTail = (component: string, lines = 30): string => {
    const p = procs.find((x) => x.name === component);
    if (!p || !existsSync(p.logPath)) return "";
    return readFileSync(p.logPath, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  };

  const start = (name: string, bin: string, args: string[]): Proc => {
    const logPath = join(dir, `${name}.log`);
    const fd = openSync(logPath, "a");
    const [k, v] = marker.split("=") as [string, string];
    const child = spawn(bin, args, { cwd: dir, stdio: ["ignore", fd, fd], env: { ...process.env, [k]: v } });
    closeSync(fd);
    trackChild(child);
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      child.once("exit", () => resolve());
      child.once("error", () => resolve());
    });
    const p = { name, child, logPath, exited };
    procs.push(p);
    log(`started ${name} (pid ${child.pid})`);
    return p;
  };

  /** Fails with the component's log when any process died during start-up. */
  const checkAlive = (): void => {
    for (const p of procs) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) {
        throw new Error(
          `${p.name} exited (${p.child.exitCode ?? p.child.signalCode}) during start-up:\n${logTail(p.name, 40)}`,
        );
      }
    }
  };

  const waitFor = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    let last: unknown;
    for (;;) {
      checkAlive();
      try {
        if (await check()) return;
      } catch (e) {
        last = e;
      }
      if (Date.now() > deadline)
        throw new Error(
          `control plane: timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`,
        );
      await sleep(250);
    }
  };

  try {
    const [etcdClient, etcdPeer, apiPort, kwokPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const benchmarkLogFile = join(dir, "container-logs", "benchmark.log");
    const server = `https://127.0.0.1:${apiPort}`;
    const token = randomBytes(24).toString("hex");
    makePki(dir, { caName: "valkey-on-eks-e2e-ca", days: 2, apiserverIps: [firstIp(serviceCidr)] });
    const caPem = readFileSync(join(dir, "ca.crt"), "utf8");
    writeFileSync(join(dir, "tokens.csv"), `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
    const kubeconfig = tokenKubeconfig(server, caPem, token, "local");
    const kubeconfigPath = join(dir, "kubeconfig");
    writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });

    const api = <T = unknown>(
      method: string,
      path: string,
      body?: unknown,
      opts: { contentType?: string; allow?: number[] } = {},
    ) =>
      new Promise<{ status: number; body: T }>((resolve, reject) => {
        const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
        const req = httpsRequest(
          `${server}${path}`,
          {
            method,
            ca: caPem,
            headers: {
              authorization: `Bearer ${token}`,
              accept: "application/json",
              ...(payload !== undefined
                ? {
                    "content-type": opts.contentType ?? "application/json",
                    "content-length": Buffer.byteLength(payload),
                  }
                : {}),
            },
            timeout: 30_000,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              const status = res.statusCode ?? 0;
              let parsed: unknown = text;
              try {
                parsed = JSON.parse(text);
              } catch {
                /* plain text (e.g. /readyz) */
              }
              if ((status < 200 || status > 299) && !(opts.allow ?? []).includes(status)) {
                reject(new Error(`${method} ${path}: HTTP ${status}: ${text.slice(0, 500)}`));
              } else resolve({ status, body: parsed as T });
            });
          },
        );
        req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
        req.on("error", reject);
        if (payload !== undefined) req.write(payload);
        req.end();
      });

    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    await launchControlPlane(
      {
        bins: controlPlanePaths,
        dataDir: dir,
        pkiDir: dir,
        etcd: { clientPort: etcdClient, peerPort: etcdPeer },
        apiserver: { address: "127.0.0.1", port: apiPort },
        serviceCidr,
        kubeconfig: kubeconfigPath,
        auth: options.rbac === true ? "rbac" : "open",
        // kwok's nodes have no resolvable hostname: reach their kubelet (kwok's server) by InternalIP.
        kubeletByInternalIp: options.holdJobPods ?? false,
      },
      {
        spawn: (c) => start(c.name, c.argv[0]!, c.argv.slice(1)),
        waitFor,
        etcdHealthy: () => etcdHealthy(etcdUrl),
        apiReady: async () => (await api<string>("GET", "/readyz", undefined, { allow: [500, 503] })).status === 200,
        log,
      },
    );

    // --- kwok -----------------------------------------------------------------------------
    const stagesPath = join(dir, "kwok-stages.yaml");
    const logsConfig = options.holdJobPods ? `\n---\n${kwokContainerLogs({ benchmark: benchmarkLogFile })}` : "";
    const stages = kwokStages(controlPlanePaths.kwokStages, storageClasses, options.holdJobPods ?? false);
    writeFileSync(stagesPath, `${stages}${logsConfig}\n`);
    start("kwok", controlPlanePaths.kwok, [
      `--config=${stagesPath}`,
      `--kubeconfig=${kubeconfigPath}`,
      `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION.key}=${FAKE_NODE_ANNOTATION.value}`,
      `--cidr=${podCidr}`,
      "--node-ip=127.0.0.1",
      "--node-lease-duration-seconds=40",
      // kwok's kubelet-like server (pods/log), the port every node advertises as its kubelet
      // endpoint; on all addresses, as the nodes' InternalIPs span 127.63.0.0/24.
      ...(options.holdJobPods ? [`--node-port=${kwokPort}`, `--server-address=0.0.0.0:${kwokPort}`] : []),
    ]);

    // --- storage and nodes ----------------------------------------------------------------
    for (const [i, name] of storageClasses.entries()) {
      await api("POST", "/apis/storage.k8s.io/v1/storageclasses", {
        apiVersion: "storage.k8s.io/v1",
        kind: "StorageClass",
        metadata: { name, annotations: i === 0 ? { "storageclass.kubernetes.io/is-default-class": "true" } : {} },
        provisioner: "kwok.x-k8s.io/volume",
        reclaimPolicy: "Delete",
        volumeBindingMode: "Immediate",
        allowVolumeExpansion: true,
      });
    }

    const cidrs = nodeCidrs(podCidr, zones.length + 1);
    const nodes: FakeNode[] = [
      ...zones.map((zone, i) => ({
        name: `kwok-valkey-${zone}`,
        zone,
        valkeyPool: true,
        podCidr: cidrs[i]!,
        internalIp: `127.63.0.${i + 1}`,
      })),
      {
        name: SYSTEM_NODE,
        zone: zones[0]!,
        valkeyPool: false,
        podCidr: cidrs[zones.length]!,
        internalIp: `127.63.0.${zones.length + 1}`,
      },
    ];
    const region = zones[0]!.replace(/[a-z]$/, "");
    for (const n of nodes) {
      const resources = {
        "cpu": options.nodeCpu ?? "16",
        "memory": options.nodeMemory ?? "128Gi",
        "pods": "110",
        "ephemeral-storage": "200Gi",
      };
      await api("POST", "/api/v1/nodes", {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name: n.name,
          annotations: { [FAKE_NODE_ANNOTATION.key]: FAKE_NODE_ANNOTATION.value, "node.alpha.kubernetes.io/ttl": "0" },
          labels: {
            "kubernetes.io/hostname": n.name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": n.valkeyPool ? "arm64" : "amd64",
            "node.kubernetes.io/instance-type": n.valkeyPool ? "r7g.xlarge" : "m7i.large",
            [ZONE_LABEL]: n.zone,
            "topology.kubernetes.io/region": region,
            "type": "kwok",
            ...(n.valkeyPool
              ? { "karpenter.sh/nodepool": VALKEY_NODE_POOL, "karpenter.sh/capacity-type": "on-demand" }
              : { "valkey-on-eks/system": "true" }),
          },
        },
        spec: { podCIDR: n.podCidr, podCIDRs: [n.podCidr], ...(n.valkeyPool ? { taints: [{ ...VALKEY_TAINT }] } : {}) },
        status: {
          capacity: resources,
          allocatable: resources,
          addresses: [
            { type: "InternalIP", address: n.internalIp },
            { type: "Hostname", address: n.name },
          ],
        },
      });
    }

    interface NodeList {
      items: Array<{
        metadata: { name: string };
        spec: { taints?: Array<{ key: string }> };
        status: { conditions?: Array<{ type: string; status: string }> };
      }>;
    }
    await waitFor("four Ready nodes without not-ready taints", async () => {
      const { body } = await api<NodeList>("GET", "/api/v1/nodes");
      const ready = body.items.filter(
        (n) =>
          n.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") &&
          !(n.spec.taints ?? []).some((t) => t.key.startsWith("node.kubernetes.io/")),
      );
      return ready.length === nodes.length;
    });
    // Pods need the namespace's default ServiceAccount (made by the controller manager).
    await waitFor(
      "ServiceAccount default/default",
      async () =>
        (await api("GET", "/api/v1/namespaces/default/serviceaccounts/default", undefined, { allow: [404] })).status ===
        200,
    );
    log("nodes Ready, controllers up");

    return {
      kubeconfigPath,
      kubeconfig,
      server,
      token,
      caPem,
      podCidr,
      serviceCidr,
      nodes,
      dir,
      benchmarkLogFile,
      marker,
      pids: () =>
        procs
          .filter((p) => p.child.exitCode === null && p.child.signalCode === null && p.child.pid !== undefined)
          .map((p) => p.child.pid!),
      api,
      logTail,
      stop,
    };
  } catch (e) {
    const tails = procs.map((p) => `--- ${p.name} ---\n${logTail(p.name, 15)}`).join("\n");
    await stop();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${tails}`, { cause: e });
  }
}

/** etcd's /health says healthy. */
function etcdHealthy(etcdUrl: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const req = httpRequest(`${etcdUrl}/health`, { timeout: 2000 }, (res) => {
      let t = "";
      res.on("data", (c: Buffer) => (t += c.toString()));
      res.on("end", () => resolve(res.statusCode === 200 && t.includes('"health":"true"')));
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}
