/**
 * TCP reachability probes on the local real cluster: a run-once pod (the valkey test image, whose
 * Debian base has perl) that opens a TCP connection to each target with a 3 s timeout and prints
 * `ip:port open` or `ip:port closed: <error>`. A port a NetworkPolicy denies is dropped by Cilium, so
 * it shows as a timeout, not as a refusal.
 */
import { expect } from "vitest";
import type { Api } from "../../../apps/kube-local/api.js";

export interface ProbeTarget {
  ip: string;
  port: number;
}

interface Pod {
  status: { phase?: string };
}

const SCRIPT =
  'for (@ARGV) { my $s = IO::Socket::INET->new(PeerAddr => $_, Timeout => 3); print "$_ ", ($s ? "open" : "closed: $@"), "\\n"; }';

let seq = 0;

/** A run-once pod's spec beyond its name: where it runs, what it runs, with which labels and env. */
export interface RunOnce {
  ns: string;
  node: string;
  image: string;
  labels: Record<string, string>;
  command: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  /** @default 180000 */
  timeoutMs?: number;
}

/** Runs a pod once (restartPolicy Never) to its end; returns its phase and log, and deletes it. */
export async function runOnce(api: Api, o: RunOnce): Promise<{ phase: string; log: string }> {
  const name = `probe-${++seq}-${Date.now().toString(36)}`;
  const { status } = await api("POST", `/api/v1/namespaces/${o.ns}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { ...o.labels, "probe.test/name": name } },
    spec: {
      nodeName: o.node,
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      containers: [{ name: "probe", image: o.image, imagePullPolicy: "Never", command: o.command, env: o.env ?? [] }],
    },
  });
  expect(status).toBe(201);
  const end = Date.now() + (o.timeoutMs ?? 180_000);
  let phase: string;
  for (;;) {
    const { body } = await api<Pod>("GET", `/api/v1/namespaces/${o.ns}/pods/${name}`);
    phase = body.status.phase ?? "";
    if (phase === "Succeeded" || phase === "Failed") break;
    if (Date.now() > end) throw new Error(`pod ${name}: ${JSON.stringify(body.status)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // The API client parses a body that is JSON; a log line of JSON is still the log.
  const body = (await api<unknown>("GET", `/api/v1/namespaces/${o.ns}/pods/${name}/log`)).body;
  const log = typeof body === "string" ? body : JSON.stringify(body);
  await api("DELETE", `/api/v1/namespaces/${o.ns}/pods/${name}?gracePeriodSeconds=0`);
  return { phase, log };
}

/** Runs a probe pod with `labels` on `node` in `ns`; returns, per "ip:port", whether it connected. */
export async function probe(
  api: Api,
  o: { ns: string; node: string; image: string; labels: Record<string, string>; targets: ProbeTarget[] },
): Promise<Map<string, boolean>> {
  const { log } = await runOnce(api, {
    ...o,
    command: ["perl", "-MIO::Socket::INET", "-e", SCRIPT, ...o.targets.map((t) => `${t.ip}:${t.port}`)],
  });
  const out = new Map<string, boolean>();
  for (const line of log.trim().split("\n")) {
    const [target, verdict] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
    out.set(target, verdict === "open");
  }
  expect([...out.keys()].sort(), log).toEqual(o.targets.map((t) => `${t.ip}:${t.port}`).sort());
  return out;
}

/**
 * The positive control of a denied port: an extra NetworkPolicy (policies add up) that admits pods
 * labelled `from` to `port` of the pods `to` selects. Returns a function that deletes it.
 */
export async function allowBusFrom(
  api: Api,
  o: { ns: string; name: string; to: Record<string, string>; from: Record<string, string>; port: number },
): Promise<() => Promise<void>> {
  const path = `/apis/networking.k8s.io/v1/namespaces/${o.ns}/networkpolicies`;
  const { status } = await api("POST", path, {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: o.name },
    spec: {
      podSelector: { matchLabels: o.to },
      policyTypes: ["Ingress"],
      ingress: [{ from: [{ podSelector: { matchLabels: o.from } }], ports: [{ protocol: "TCP", port: o.port }] }],
    },
  });
  expect(status).toBe(201);
  // Cilium computes and pushes the new policy to the endpoints asynchronously.
  await new Promise((r) => setTimeout(r, 3000));
  return async () => {
    expect((await api("DELETE", `${path}/${o.name}`)).status).toBe(200);
  };
}
