/**
 * NetworkPolicy is enforced on the local real cluster (Cilium, docs/real-cluster.md): a real
 * valkey-server pod on one node, client pods on another node running valkey-cli PING through the
 * pod network. Before any policy, every client connects, so a later refusal is the policy's doing
 * and not broken networking. With an ingress policy that admits only `role=client` on 6379, the
 * unlabelled client is refused and the labelled one answered. An egress policy that lets a
 * labelled client reach only DNS refuses it too. Needs root and `install.sh --real-cluster`;
 * starts the cluster if none runs (kube:local up is idempotent) and leaves it running for the
 * next file. `tests/pods/kube-local.test.ts` tears it down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, type Api } from "../../apps/kube-local/api.js";
import { podsSkipReason, UP_HOOK_MS, upPodsCluster } from "./support/byo-on-pods.js";

const reason = podsSkipReason({ pulumi: false });
const NS = "np-test";

interface Pod {
  status: {
    phase?: string;
    podIP?: string;
    containerStatuses?: Array<{ ready?: boolean; state?: { terminated?: { exitCode: number } } }>;
  };
}

describe.skipIf(reason !== "")(`NetworkPolicy enforcement on real pods${reason ? ` (skipped: ${reason})` : ""}`, () => {
  let api: Api;
  let valkeyImage = "";
  let nodes: string[] = [];
  let serverIp = "";

  const waitPod = async (name: string, done: (p: Pod) => boolean, ms = 120_000): Promise<Pod> => {
    const end = Date.now() + ms;
    for (;;) {
      const { status, body } = await api<Pod>("GET", `/api/v1/namespaces/${NS}/pods/${name}`);
      if (status === 200 && done(body)) return body;
      if (Date.now() > end) throw new Error(`pod ${name}: ${JSON.stringify(body.status)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  /** Runs `valkey-cli PING` against the server from a new pod on the second node; its output and exit code. */
  let n = 0;
  const ping = async (labels: Record<string, string>): Promise<{ out: string; code: number }> => {
    const name = `client-${++n}`;
    const { status } = await api("POST", `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels },
      spec: {
        nodeName: nodes[1],
        restartPolicy: "Never",
        containers: [
          {
            name: "c",
            image: valkeyImage,
            imagePullPolicy: "Never",
            command: ["sh", "-c", `timeout 5 valkey-cli -h ${serverIp} -p 6379 PING`],
          },
        ],
      },
    });
    expect(status).toBe(201);
    const pod = await waitPod(name, (p) => p.status.phase === "Succeeded" || p.status.phase === "Failed");
    const log = await api<string>("GET", `/api/v1/namespaces/${NS}/pods/${name}/log`);
    return { out: String(log.body).trim(), code: pod.status.containerStatuses?.[0]?.state?.terminated?.exitCode ?? -1 };
  };

  beforeAll(async () => {
    const s = await upPodsCluster();
    api = apiClient(s.kubeconfig);
    valkeyImage = s.images.valkey ?? "";
    nodes = s.nodes.map((x) => x.name);
    await api("DELETE", `/api/v1/namespaces/${NS}`);
    for (let i = 0; i < 120 && (await api("GET", `/api/v1/namespaces/${NS}`)).status === 200; i++)
      await new Promise((r) => setTimeout(r, 500));
    expect(
      (await api("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } })).status,
    ).toBe(201);
    for (
      let i = 0;
      i < 60 && (await api("GET", `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status !== 200;
      i++
    )
      await new Promise((r) => setTimeout(r, 500));
    await api("POST", `/api/v1/namespaces/${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "server", labels: { app: "server" } },
      spec: {
        nodeName: nodes[0],
        containers: [
          {
            name: "valkey",
            image: valkeyImage,
            imagePullPolicy: "Never",
            command: ["valkey-server", "--port", "6379", "--protected-mode", "no", "--save", ""],
            readinessProbe: { exec: { command: ["valkey-cli", "PING"] }, periodSeconds: 1 },
          },
        ],
      },
    });
    const server = await waitPod("server", (p) => p.status.containerStatuses?.[0]?.ready === true);
    serverIp = server.status.podIP ?? "";
  }, UP_HOOK_MS);

  afterAll(async () => {
    await api?.("DELETE", `/api/v1/namespaces/${NS}`);
  });

  it("denies what the policies deny and allows what they allow", { timeout: 600_000 }, async () => {
    // Baseline: no policy, every client gets through (so a refusal below is the policy's).
    expect(await ping({})).toEqual({ out: "PONG", code: 0 });
    expect(await ping({ role: "client" })).toEqual({ out: "PONG", code: 0 });

    const policy = (name: string, spec: Record<string, unknown>) =>
      api("POST", `/apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`, {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name },
        spec,
      });
    expect(
      (
        await policy("server-ingress", {
          podSelector: { matchLabels: { app: "server" } },
          policyTypes: ["Ingress"],
          ingress: [
            { from: [{ podSelector: { matchLabels: { role: "client" } } }], ports: [{ protocol: "TCP", port: 6379 }] },
          ],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await policy("dns-only-egress", {
          podSelector: { matchLabels: { egress: "dns-only" } },
          policyTypes: ["Egress"],
          egress: [
            {
              ports: [
                { protocol: "UDP", port: 53 },
                { protocol: "TCP", port: 53 },
              ],
            },
          ],
        })
      ).status,
    ).toBe(201);
    await new Promise((r) => setTimeout(r, 3000));

    const denied = await ping({});
    expect(denied.out).not.toContain("PONG");
    expect(denied.code).not.toBe(0);
    expect(await ping({ role: "client" })).toEqual({ out: "PONG", code: 0 });
    const egressDenied = await ping({ role: "client", egress: "dns-only" });
    expect(egressDenied.out).not.toContain("PONG");
    expect(egressDenied.code).not.toBe(0);
  });
});
