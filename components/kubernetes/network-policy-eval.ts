/**
 * A small, pure evaluator of Kubernetes NetworkPolicy (networking.k8s.io/v1) semantics, for
 * proving that the policies the stack renders allow exactly the paths it needs. No npm library
 * evaluates NetworkPolicies (the npm registry has generators and linters only), so this follows
 * the API reference and the concepts page (https://kubernetes.io/docs/concepts/services-networking/network-policies/):
 *
 * - a pod is isolated for ingress (egress) once any policy of its namespace selects it with
 *   that policy type; `policyTypes` defaults to ["Ingress"], plus "Egress" when `egress` is set;
 * - an isolated pod admits a connection when ANY selecting policy of that direction has a rule
 *   whose peers and ports both match (policies are additive, never deny); a non-isolated pod
 *   admits everything;
 * - a connection needs the source's egress AND the destination's ingress to allow it;
 * - a peer: `podSelector` alone = pods of the policy's namespace; `namespaceSelector` alone = every
 *   pod of the selected namespaces; both = matching pods in matching namespaces; `ipBlock` = the
 *   CIDR minus `except` (matched against the other end's IP);
 * - an absent or empty `from`/`to` matches every peer; an absent or empty `ports` every port;
 *   a port entry without `protocol` is TCP; a named port resolves against the DESTINATION pod's
 *   container ports; `endPort` makes a range;
 * - label selectors: `matchLabels` AND `matchExpressions` (In, NotIn, Exists, DoesNotExist); an
 *   empty selector selects everything.
 * Traffic to a Service is evaluated at its backend pods on the resolved target port (kube-proxy
 * DNATs before the policy applies).
 */

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface PolicyPort {
  protocol?: string;
  port?: number | string;
  endPort?: number;
}

export interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

export interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: PolicyPort[];
}

export interface Policy {
  metadata: { name?: string; namespace?: string };
  spec: { podSelector?: LabelSelector; policyTypes?: string[]; ingress?: PolicyRule[]; egress?: PolicyRule[] };
}

export interface Pod {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** Container ports, for named ports. */
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  ip?: string;
}

/** A connection's far end outside the pod network (e.g. the `direct` checks' host). */
export interface External {
  ip: string;
}

export interface World {
  policies: Policy[];
  /** Labels of each namespace (`kubernetes.io/metadata.name` is added). */
  namespaces: Record<string, Record<string, string>>;
}

export function selects(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const value = labels[e.key];
    const values = e.values ?? [];
    const ok =
      e.operator === "In"
        ? has && values.includes(value as string)
        : e.operator === "NotIn"
          ? !has || !values.includes(value as string)
          : e.operator === "Exists"
            ? has
            : e.operator === "DoesNotExist"
              ? !has
              : undefined;
    if (ok === undefined)
      throw new Error(`label selector operator "${e.operator}" is not In, NotIn, Exists or DoesNotExist`);
    if (!ok) return false;
  }
  return true;
}

function ipToInt(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`"${ip}" is not an IPv4 address`);
  return parts.reduce((n, p) => n * 256 + p, 0);
}

export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split("/");
  const prefix = Number(bits);
  if (base === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > 32)
    throw new Error(`"${cidr}" is not an IPv4 CIDR`);
  const size = 2 ** (32 - prefix);
  return Math.floor(ipToInt(ip) / size) === Math.floor(ipToInt(base) / size);
}

const isPod = (x: Pod | External): x is Pod => "namespace" in x;
const nsLabels = (world: World, ns: string): Record<string, string> => ({
  ...world.namespaces[ns],
  "kubernetes.io/metadata.name": ns,
});

function types(p: Policy): string[] {
  return p.spec.policyTypes ?? (p.spec.egress === undefined ? ["Ingress"] : ["Ingress", "Egress"]);
}

function peerMatches(world: World, peer: PolicyPeer, policyNs: string, other: Pod | External): boolean {
  if (peer.ipBlock !== undefined) {
    const ip = other.ip;
    if (ip === undefined) return false;
    return inCidr(ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(ip, c));
  }
  if (!isPod(other)) return false;
  const nsOk =
    peer.namespaceSelector === undefined
      ? other.namespace === policyNs
      : selects(peer.namespaceSelector, nsLabels(world, other.namespace));
  return nsOk && (peer.podSelector === undefined || selects(peer.podSelector, other.labels));
}

function portMatches(ports: PolicyPort[] | undefined, dst: Pod | External, port: number, protocol: string): boolean {
  if (ports === undefined || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? "TCP") !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === "string") {
      const named = isPod(dst)
        ? dst.ports?.find((c) => c.name === p.port && (c.protocol ?? "TCP") === protocol)
        : undefined;
      return named?.containerPort === port;
    }
    return p.endPort === undefined ? p.port === port : port >= p.port && port <= p.endPort;
  });
}

/** Whether `pod` lets this direction through: not isolated, or some selecting policy's rule matches. */
function side(
  world: World,
  pod: Pod,
  dir: "Ingress" | "Egress",
  other: Pod | External,
  dst: Pod | External,
  port: number,
  protocol: string,
): boolean {
  const selecting = world.policies.filter(
    (p) =>
      (p.metadata.namespace ?? "default") === pod.namespace &&
      types(p).includes(dir) &&
      selects(p.spec.podSelector ?? {}, pod.labels),
  );
  if (selecting.length === 0) return true;
  return selecting.some((p) =>
    (dir === "Ingress" ? (p.spec.ingress ?? []) : (p.spec.egress ?? [])).some((rule) => {
      const peers = dir === "Ingress" ? rule.from : rule.to;
      const peerOk =
        peers === undefined ||
        peers.length === 0 ||
        peers.some((peer) => peerMatches(world, peer, pod.namespace, other));
      return peerOk && portMatches(rule.ports, dst, port, protocol);
    }),
  );
}

/** Whether a connection from `src` to `dst` on `port`/`protocol` is allowed by the policies. */
export function allowed(
  world: World,
  src: Pod | External,
  dst: Pod | External,
  port: number,
  protocol = "TCP",
): boolean {
  const egress = isPod(src) ? side(world, src, "Egress", dst, dst, port, protocol) : true;
  const ingress = isPod(dst) ? side(world, dst, "Ingress", src, dst, port, protocol) : true;
  return egress && ingress;
}

export interface ServiceSpec {
  metadata: { name?: string; namespace?: string };
  spec: {
    selector?: Record<string, string>;
    ports?: Array<{ port: number; targetPort?: number | string; protocol?: string }>;
  };
}

/** The backends of a Service port: each selected pod with the container port the target resolves to. */
export function serviceBackends(
  service: ServiceSpec,
  pods: Pod[],
  port: number,
): Array<{ pod: Pod; port: number; protocol: string }> {
  const sp = service.spec.ports?.find((p) => p.port === port);
  if (sp === undefined || service.spec.selector === undefined) return [];
  const ns = service.metadata.namespace ?? "default";
  const protocol = sp.protocol ?? "TCP";
  const selector = service.spec.selector;
  return pods
    .filter((p) => p.namespace === ns && selects({ matchLabels: selector }, p.labels))
    .flatMap((pod) => {
      const target = sp.targetPort ?? sp.port;
      const resolved = typeof target === "number" ? target : pod.ports?.find((c) => c.name === target)?.containerPort;
      return resolved === undefined ? [] : [{ pod, port: resolved, protocol }];
    });
}
