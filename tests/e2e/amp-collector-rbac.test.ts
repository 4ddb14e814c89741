/**
 * The AMP managed collector's Kubernetes permissions (`metrics.amp`, components/aws/managed-prometheus.ts)
 * decided by a real kube-apiserver's RBAC authorizer (the e2e plane with `rbac`): the ClusterRole and
 * its binding, applied through the API as the program renders them, let `aps-collector-user` discover
 * what the scrape job reads (pods, services, endpoints, nodes in any namespace; `/metrics`) and
 * nothing it must not (Secrets, writes, exec); before the binding it may do none of it. AMP itself
 * (the scraper, its access entry mapping its role to that user) is not run here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ampCollectorRbac, AMP_COLLECTOR_USER } from "../../components/aws/managed-prometheus.js";
import { eventually } from "../support/processes.js";
import { startControlPlane, type ControlPlane } from "./support/control-plane.js";

interface Access {
  verb: string;
  resource?: string;
  subresource?: string;
  group?: string;
  namespace?: string;
  path?: string;
}

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane({ rbac: true });
}, 180_000);
afterAll(async () => plane?.stop());

/** The authorizer's answer for the collector's user (a SubjectAccessReview). */
async function allowed(a: Access): Promise<boolean> {
  const spec =
    a.path !== undefined
      ? { user: AMP_COLLECTOR_USER, nonResourceAttributes: { path: a.path, verb: a.verb } }
      : {
          user: AMP_COLLECTOR_USER,
          resourceAttributes: {
            verb: a.verb,
            resource: a.resource,
            group: a.group ?? "",
            ...(a.subresource === undefined ? {} : { subresource: a.subresource }),
            ...(a.namespace === undefined ? {} : { namespace: a.namespace }),
          },
        };
  const r = await plane.api<{ status: { allowed: boolean } }>(
    "POST",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec },
  );
  return r.body.status.allowed;
}

const label = (a: Access) =>
  a.path !== undefined
    ? `${a.verb} ${a.path}`
    : `${a.verb} ${a.group ? `${a.group}/` : ""}${a.resource}${a.subresource ? `/${a.subresource}` : ""}${a.namespace ? ` in ${a.namespace}` : " (cluster)"}`;

/** What the collector's discovery and scrape need. */
const NEEDED: Access[] = [
  { verb: "list", resource: "pods" },
  { verb: "watch", resource: "pods" },
  { verb: "list", resource: "pods", namespace: "valkey" },
  { verb: "watch", resource: "pods", namespace: "valkey" },
  { verb: "list", resource: "services" },
  { verb: "list", resource: "endpoints" },
  { verb: "get", resource: "nodes" },
  { verb: "get", resource: "nodes", subresource: "metrics" },
  { verb: "list", resource: "ingresses", group: "networking.k8s.io" },
  { verb: "get", path: "/metrics" },
];
/** What it must never do. */
const FORBIDDEN: Access[] = [
  { verb: "get", resource: "secrets", namespace: "valkey" },
  { verb: "list", resource: "secrets" },
  { verb: "create", resource: "pods", namespace: "valkey" },
  { verb: "delete", resource: "pods", namespace: "valkey" },
  { verb: "create", resource: "pods", subresource: "exec", namespace: "valkey" },
  { verb: "patch", resource: "nodes" },
  { verb: "update", resource: "configmaps", namespace: "valkey" },
  { verb: "list", resource: "statefulsets", group: "apps" },
];

describe("the AMP collector's RBAC on a real API server", () => {
  it("grants aps-collector-user discovery and /metrics once bound, and nothing else", async () => {
    const before = await Promise.all(NEEDED.map(allowed));
    expect(NEEDED.filter((_, i) => before[i]).map(label), "allowed before the binding").toEqual([]);

    const rbac = ampCollectorRbac({ "app.kubernetes.io/managed-by": "valkey-on-eks" });
    await plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      ...rbac.clusterRole,
    });
    await plane.api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      ...rbac.binding,
    });

    // The authorizer reads bindings from its informers: wait (bounded) until it has seen this one.
    const denied = async () => {
      const granted = await Promise.all(NEEDED.map(allowed));
      return NEEDED.filter((_, i) => !granted[i]).map(label);
    };
    await eventually("the RBAC authorizer to see the binding", 30_000, async () =>
      (await denied()).length < NEEDED.length ? true : undefined,
    );
    expect(await denied(), "needed but denied").toEqual([]);
    const leaked = await Promise.all(FORBIDDEN.map(allowed));
    expect(FORBIDDEN.filter((_, i) => leaked[i]).map(label), "forbidden but allowed").toEqual([]);
  });
});
