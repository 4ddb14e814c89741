/**
 * The one control-plane launcher (harness/control-plane/launch.ts) that the e2e tier's kwok plane
 * and kube:local both start: the argv each kind of plane gets and the order of the start. The
 * real starts run in tests/e2e (every file with a control plane) and tests/pods (kube:local).
 */
import { describe, expect, it } from "vitest";
import {
  apiserverCommand,
  controllerManagerCommand,
  etcdCommand,
  launchControlPlane,
  type ControlPlaneSpec,
} from "../../harness/control-plane/launch.js";

const bins = { etcd: "/b/etcd", kubeApiserver: "/b/api", kubeControllerManager: "/b/kcm", kubeScheduler: "/b/sched" };
const kwok: ControlPlaneSpec = {
  bins,
  dataDir: "/d",
  pkiDir: "/d",
  etcd: { clientPort: 40001, peerPort: 40002 },
  apiserver: { address: "127.0.0.1", port: 40003 },
  serviceCidr: "127.96.0.0/16",
  kubeconfig: "/d/kubeconfig",
  auth: "open",
  kubeletByInternalIp: false,
};
const kubelets: ControlPlaneSpec = {
  ...kwok,
  pkiDir: "/d/pki",
  etcd: { clientPort: 2379, peerPort: 2380 },
  apiserver: { address: "10.231.0.1", port: 6443 },
  serviceCidr: "10.233.0.0/16",
  auth: "nodes",
  nodeCidrs: { cidr: "10.232.0.0/16", maskSize: 24 },
  kubeletByInternalIp: true,
};

describe("control-plane launcher", () => {
  it("etcd on loopback with its own peer URL, no fsync", () => {
    expect(etcdCommand(kubelets).argv).toEqual([
      "/b/etcd",
      "--name=default",
      "--data-dir=/d/etcd",
      "--listen-client-urls=http://127.0.0.1:2379",
      "--advertise-client-urls=http://127.0.0.1:2379",
      "--listen-peer-urls=http://127.0.0.1:2380",
      "--initial-advertise-peer-urls=http://127.0.0.1:2380",
      "--initial-cluster=default=http://127.0.0.1:2380",
      "--unsafe-no-fsync",
      "--log-level=warn",
    ]);
  });

  it("open (kwok): AlwaysAllow, no endpoint reconciler, no kubelet client certificate, shared controller credentials, no node CIDRs", () => {
    const api = apiserverCommand(kwok).argv;
    expect(api).toContain("--authorization-mode=AlwaysAllow");
    expect(api).toContain("--endpoint-reconciler-type=none");
    expect(api.some((a) => a.startsWith("--kubelet-client-certificate"))).toBe(false);
    expect(api).not.toContain("--kubelet-preferred-address-types=InternalIP");
    expect(api).toContain("--etcd-servers=http://127.0.0.1:40001");
    expect(api).toContain("--token-auth-file=/d/tokens.csv");
    const kcm = controllerManagerCommand(kwok).argv;
    expect(kcm).toContain(
      "--controllers=*,-node-ipam-controller,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller",
    );
    expect(kcm).toContain("--allocate-node-cidrs=false");
    expect(kcm).toContain("--use-service-account-credentials=false");
  });

  it("nodes (kube:local): Node and RBAC with NodeRestriction, the kubelet client certificate, node CIDRs, a credential per controller", () => {
    const api = apiserverCommand(kubelets).argv;
    expect(api).toContain("--authorization-mode=Node,RBAC");
    expect(api).toContain("--enable-admission-plugins=NodeRestriction");
    expect(api).toContain("--kubelet-client-certificate=/d/pki/apiserver-kubelet-client.crt");
    expect(api).toContain("--kubelet-preferred-address-types=InternalIP");
    expect(api).not.toContain("--endpoint-reconciler-type=none");
    expect(api).toContain("--bind-address=10.231.0.1");
    const kcm = controllerManagerCommand(kubelets).argv;
    expect(kcm).toContain(
      "--controllers=*,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller",
    );
    expect(kcm).toEqual(
      expect.arrayContaining([
        "--allocate-node-cidrs=true",
        "--cluster-cidr=10.232.0.0/16",
        "--node-cidr-mask-size=24",
      ]),
    );
    expect(kcm).toContain("--use-service-account-credentials=true");
  });

  it("starts etcd, waits for it where it can, then the API server, its hook, waits for /readyz, then the controllers", async () => {
    const events: string[] = [];
    await launchControlPlane(kwok, {
      spawn: (c) => events.push(`spawn ${c.name}`),
      waitFor: async (what, check) => {
        events.push(`wait ${what}`);
        expect(await check()).toBe(true);
      },
      etcdHealthy: () => Promise.resolve(true),
      apiReady: () => Promise.resolve(true),
      afterApiserver: () => events.push("hook"),
    });
    expect(events).toEqual([
      "spawn etcd",
      "wait etcd /health",
      "spawn kube-apiserver",
      "hook",
      "wait kube-apiserver /readyz",
      "spawn kube-controller-manager",
      "spawn kube-scheduler",
    ]);
  });

  it("a waiter that throws stops the launch: nothing after the API server starts", async () => {
    const spawned: string[] = [];
    await expect(
      launchControlPlane(kubelets, {
        spawn: (c) => spawned.push(c.name),
        waitFor: (what) => Promise.reject(new Error(`timed out waiting for ${what}`)),
        apiReady: () => Promise.resolve(false),
      }),
    ).rejects.toThrow("timed out waiting for kube-apiserver /readyz");
    expect(spawned).toEqual(["etcd", "kube-apiserver"]);
  });
});
