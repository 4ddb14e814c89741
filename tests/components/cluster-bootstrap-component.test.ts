/**
 * ClusterBootstrap under Pulumi mocks: one dynamic resource `${name}-run`, parented to the
 * component (checked through the recorded parent), with the inputs the implementation reads;
 * kubeconfig and password are secrets,
 * and the serialized provider text carries neither (nor anything but the module path).
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as pulumi from "@pulumi/pulumi";
import type * as BootstrapModule from "../../components/steps/cluster-bootstrap/component.js";
import { installMocks, settle, valueOf, type MockRecorder } from "../support/pulumi-mocks.js";

const DYNAMIC = "pulumi-nodejs:dynamic:Resource";
const password = "bootstrap-pw-do-not-leak";
const kubeconfig = "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: { token: kube-token-do-not-leak }\n";

describe("ClusterBootstrap component (mocks)", () => {
  let mocks: MockRecorder;
  let mod: typeof BootstrapModule;

  beforeAll(async () => {
    mocks = installMocks({
      outputs: (r) =>
        r.type === DYNAMIC
          ? { changed: true, nodeIds: { "valkey-0": "a".repeat(40) }, plan: { shards: [], primariesPerZone: {} } }
          : {},
    });
    mod = await import("../../components/steps/cluster-bootstrap/component.js");
  });

  it("registers the dynamic resource with the inputs, secrets marked, and exposes its outputs", async () => {
    const plain = {
      namespace: "valkey",
      selector: "app.kubernetes.io/instance=vc",
      expectedPods: 6,
      primaries: 3,
      replicasPerPrimary: 1,
    };
    const c = new mod.ClusterBootstrap("vc", { ...plain, kubeconfig, password });
    expect(await valueOf(c.changed)).toBe(true);
    expect(await valueOf(c.nodeIds)).toEqual({ "valkey-0": "a".repeat(40) });
    await settle();
    const comp = mocks.get("valkey-on-eks:steps:ClusterBootstrap", "vc");
    expect(comp.parent).toBeUndefined();
    const run = mocks.get(DYNAMIC, "vc-run");
    expect([run.parent, run.parentUrn]).toEqual(["vc", await valueOf(c.urn)]);
    // Every input as given, plus the default connector.
    expect(run.inputs).toMatchObject({ ...plain, connector: "port-forward", kubeconfig, password });
    expect(run.redacted.kubeconfig).toBe("[secret]");
    expect(run.redacted.password).toBe("[secret]");
    const provider = run.inputs.__provider as string;
    expect(typeof provider).toBe("string");
    expect(provider).toContain("cluster-bootstrap/implementation.ts");
    expect(provider).not.toContain(password);
    expect(provider).not.toContain("kube-token-do-not-leak");
    expect(JSON.stringify(run.redacted)).not.toContain(password);
    expect(JSON.stringify(run.redacted)).not.toContain("kube-token-do-not-leak");
  });

  it("passes the connector, context and timeout through; no password input when none is given", async () => {
    const plain = {
      namespace: "valkey",
      selector: "a=b",
      expectedPods: 3,
      primaries: 3,
      replicasPerPrimary: 0,
      connector: "direct" as const,
      context: "ctx",
      timeoutMs: 5000,
    };
    const c = new mod.ClusterBootstrap("vd", { ...plain, kubeconfig: pulumi.secret(kubeconfig) });
    await valueOf(c.plan);
    await settle();
    const run = mocks.get(DYNAMIC, "vd-run");
    // Every input as given (the secret kubeconfig unwrapped).
    expect(run.inputs).toMatchObject({ ...plain, kubeconfig });
    expect(run.inputs).not.toHaveProperty("password");
    // Already a secret when given: it stays one.
    expect(run.redacted.kubeconfig).toBe("[secret]");
    expect([run.parent, run.parentUrn]).toEqual(["vd", await valueOf(c.urn)]);
  });
});
