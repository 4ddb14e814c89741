/**
 * The NetworkPolicy evaluator against the allow/deny cases of the Kubernetes docs
 * (https://kubernetes.io/docs/concepts/services-networking/network-policies/): the
 * `test-network-policy` example, default deny / allow all for each direction, the
 * "namespaceSelector AND podSelector" vs "OR" peers, endPort ranges, named ports, ipBlock
 * `except`, matchExpressions, and Services resolved to backends on their target port.
 */
import { describe, expect, it } from "vitest";
import {
  allowed,
  inCidr,
  selects,
  serviceBackends,
  type Pod,
  type Policy,
  type World,
} from "../../components/kubernetes/network-policy-eval.js";

const pod = (
  name: string,
  namespace: string,
  labels: Record<string, string>,
  ip: string,
  ports?: Pod["ports"],
): Pod => ({
  name,
  namespace,
  labels,
  ip,
  ports,
});
const db = pod("db", "default", { role: "db" }, "10.1.0.1");
const frontend = pod("fe", "default", { role: "frontend" }, "10.1.0.2");
const other = pod("other", "default", { role: "other" }, "10.1.0.3");
const inProject = pod("p", "proj", { any: "x" }, "10.1.0.4");
const frontendElsewhere = pod("fe2", "elsewhere", { role: "frontend" }, "10.1.0.5");
const namespaces = { default: {}, proj: { project: "myproject" }, elsewhere: {} };

/** The docs' test-network-policy. */
const docsPolicy: Policy = {
  metadata: { name: "test-network-policy", namespace: "default" },
  spec: {
    podSelector: { matchLabels: { role: "db" } },
    policyTypes: ["Ingress", "Egress"],
    ingress: [
      {
        from: [
          { ipBlock: { cidr: "172.17.0.0/16", except: ["172.17.1.0/24"] } },
          { namespaceSelector: { matchLabels: { project: "myproject" } } },
          { podSelector: { matchLabels: { role: "frontend" } } },
        ],
        ports: [{ protocol: "TCP", port: 6379 }],
      },
    ],
    egress: [{ to: [{ ipBlock: { cidr: "10.0.0.0/24" } }], ports: [{ protocol: "TCP", port: 5978 }] }],
  },
};

describe("the docs' test-network-policy", () => {
  const w: World = { policies: [docsPolicy], namespaces };
  it("admits frontend pods of its namespace, every pod of project=myproject and the ipBlock minus except, on TCP 6379 only", () => {
    expect(allowed(w, frontend, db, 6379)).toBe(true);
    expect(allowed(w, inProject, db, 6379)).toBe(true);
    expect(allowed(w, { ip: "172.17.0.9" }, db, 6379)).toBe(true);
    expect(allowed(w, { ip: "172.17.1.9" }, db, 6379)).toBe(false);
    expect(allowed(w, frontend, db, 6380)).toBe(false);
    expect(allowed(w, frontend, db, 6379, "UDP")).toBe(false);
  });
  it("a podSelector alone means the policy's namespace; other pods are denied", () => {
    expect(allowed(w, frontendElsewhere, db, 6379)).toBe(false);
    expect(allowed(w, other, db, 6379)).toBe(false);
  });
  it("egress of the selected pod only to 10.0.0.0/24:5978; unselected pods are not isolated", () => {
    expect(allowed(w, db, { ip: "10.0.0.7" }, 5978)).toBe(true);
    expect(allowed(w, db, { ip: "10.0.1.7" }, 5978)).toBe(false);
    expect(allowed(w, db, frontend, 80)).toBe(false);
    expect(allowed(w, frontend, other, 80)).toBe(true);
  });
});

describe("default policies", () => {
  const all = { podSelector: {} };
  it("default deny ingress: an empty ingress list isolates every pod; egress unaffected", () => {
    const w: World = {
      policies: [{ metadata: { namespace: "default" }, spec: { ...all, policyTypes: ["Ingress"] } }],
      namespaces,
    };
    expect(allowed(w, frontend, db, 80)).toBe(false);
    expect(allowed(w, db, inProject, 80)).toBe(true);
  });
  it("allow all ingress: one empty rule admits everything", () => {
    const w: World = {
      policies: [{ metadata: { namespace: "default" }, spec: { ...all, ingress: [{}] } }],
      namespaces,
    };
    expect(allowed(w, frontendElsewhere, db, 80)).toBe(true);
  });
  it("default deny egress, and policyTypes defaulting to Ingress+Egress when egress is set", () => {
    const w: World = { policies: [{ metadata: { namespace: "default" }, spec: { ...all, egress: [] } }], namespaces };
    expect(allowed(w, db, inProject, 80)).toBe(false);
    expect(allowed(w, inProject, db, 80)).toBe(false);
  });
  it("policies are additive: a second policy's rule allows what the first does not", () => {
    const deny: Policy = { metadata: { namespace: "default" }, spec: { ...all, policyTypes: ["Ingress"] } };
    const allowFe: Policy = {
      metadata: { namespace: "default" },
      spec: {
        podSelector: { matchLabels: { role: "db" } },
        ingress: [{ from: [{ podSelector: { matchLabels: { role: "frontend" } } }] }],
      },
    };
    const w: World = { policies: [deny, allowFe], namespaces };
    expect(allowed(w, frontend, db, 1)).toBe(true);
    expect(allowed(w, other, db, 1)).toBe(false);
  });
});

describe("peers, ports and selectors", () => {
  const ns = (spec: Policy["spec"]): World => ({
    policies: [{ metadata: { namespace: "default" }, spec: { podSelector: { matchLabels: { role: "db" } }, ...spec } }],
    namespaces,
  });
  it("namespaceSelector AND podSelector in one peer vs OR as two peers (the docs' `-` example)", () => {
    const and = ns({
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { project: "myproject" } },
              podSelector: { matchLabels: { role: "frontend" } },
            },
          ],
        },
      ],
    });
    const or = ns({
      ingress: [
        {
          from: [
            { namespaceSelector: { matchLabels: { project: "myproject" } } },
            { podSelector: { matchLabels: { role: "frontend" } } },
          ],
        },
      ],
    });
    expect(allowed(and, inProject, db, 1)).toBe(false);
    expect(allowed(and, frontend, db, 1)).toBe(false);
    expect(allowed(or, inProject, db, 1)).toBe(true);
    expect(allowed(or, frontend, db, 1)).toBe(true);
  });
  it("the namespace's name label is implicit", () => {
    const w = ns({
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "elsewhere" } } }] }],
    });
    expect(allowed(w, frontendElsewhere, db, 1)).toBe(true);
  });
  it("endPort ranges (the docs' 32000–32768) and named ports on the destination", () => {
    const range = ns({ ingress: [{ ports: [{ protocol: "TCP", port: 32000, endPort: 32768 }] }] });
    expect([31999, 32000, 32768, 32769].map((p) => allowed(range, frontend, db, p))).toEqual([
      false,
      true,
      true,
      false,
    ]);
    const namedDb = pod("db2", "default", { role: "db" }, "10.1.0.9", [{ name: "valkey", containerPort: 6379 }]);
    const named = ns({ ingress: [{ ports: [{ port: "valkey" }] }] });
    expect(allowed(named, frontend, namedDb, 6379)).toBe(true);
    expect(allowed(named, frontend, namedDb, 6380)).toBe(false);
    expect(allowed(named, frontend, db, 6379)).toBe(false);
  });
  it("matchExpressions In / NotIn / Exists / DoesNotExist; an unknown operator is named", () => {
    const l = { tier: "a", x: "1" };
    expect(selects({ matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] }, l)).toBe(true);
    expect(selects({ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["a"] }] }, l)).toBe(false);
    expect(selects({ matchExpressions: [{ key: "y", operator: "NotIn", values: ["a"] }] }, l)).toBe(true);
    expect(selects({ matchExpressions: [{ key: "x", operator: "Exists" }] }, l)).toBe(true);
    expect(selects({ matchExpressions: [{ key: "x", operator: "DoesNotExist" }] }, l)).toBe(false);
    expect(selects({ matchLabels: { tier: "a" }, matchExpressions: [{ key: "x", operator: "DoesNotExist" }] }, l)).toBe(
      false,
    );
    expect(() => selects({ matchExpressions: [{ key: "x", operator: "Gt" }] }, l)).toThrow(/"Gt"/);
    expect(inCidr("10.0.255.1", "10.0.0.0/16")).toBe(true);
    expect(inCidr("10.1.0.1", "10.0.0.0/16")).toBe(false);
  });
  it("a Service resolves to its selected pods on the (named) target port", () => {
    const be = pod("be", "default", { app: "w" }, "10.1.0.10", [{ name: "write", containerPort: 6379 }]);
    const svc = {
      metadata: { name: "w", namespace: "default" },
      spec: { selector: { app: "w" }, ports: [{ port: 6379, targetPort: "write" }] },
    };
    expect(serviceBackends(svc, [be, db], 6379)).toEqual([{ pod: be, port: 6379, protocol: "TCP" }]);
    expect(serviceBackends(svc, [be], 6380)).toEqual([]);
  });
});
