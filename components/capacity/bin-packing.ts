/**
 * The nodes a stack's pods need, by the same rules the scheduler and Karpenter apply to them:
 * each pod's requests against a node's allocatable (config/instance-types.ts), required pod
 * anti-affinity in both directions (per node or per zone), hard zone spread (maxSkew 1 with every
 * configured zone a domain), and the pod's permitted zones. Pure.
 *
 * Pods are placed group by group in the order the stack creates them; a pod goes on the first
 * existing node that takes it, else Karpenter launches a node for it in the first zone the spread
 * allows, of the type `typeFor` picks for the pod's requests. Preferred anti-affinity:
 * - `relaxed`: kube-scheduler's view: honoured when an existing node satisfies it, else dropped
 *   (a pod goes beside another rather than onto a new node);
 * - `strict`: Karpenter's view while it provisions: it treats preferences as required
 *   (karpenter.sh docs, Scheduling: "Karpenter will treat preferred affinities as required"
 *   until it must relax them), so a preference may cost a node of its own.
 * Phases: the release stays; the benchmark pods run after it; the drill's load pod runs after the
 * benchmark pods completed (they hold no resources then). Nodes are only added (consolidation
 * WhenEmpty removes empty ones later), so every node counted existed at some time.
 */
import { allocatableFor, type Allocatable } from "../../config/instance-types.js";

export type Labels = Record<string, string>;
export type Phase = "release" | "benchmark" | "drill";

export interface PodGroup {
  name: string;
  count: number;
  phase: Phase;
  labels: Labels;
  request: Allocatable;
  /** Zones the pods may run in (required node affinity); undefined = every zone. */
  zones?: string[];
  /** Required anti-affinity: no pod matching `selector` in the same node / zone. */
  requiredApart: Array<{ selector: Labels; per: "node" | "zone" }>;
  /** Preferred per-node anti-affinity. */
  preferredApart: Labels[];
  /** Hard zone spread (maxSkew 1) over the pods `spreadOver` selects. */
  spreadOver?: Labels;
}

export interface PackedNode {
  zone: string;
  type: string;
  /** The phase the node was launched in. */
  phase: Phase;
  pods: string[];
}

export interface Packing {
  nodes: PackedNode[];
  /** Pods no permitted type can hold, by group. */
  unschedulable: string[];
}

interface LiveNode extends PackedNode {
  free: Allocatable;
  live: Array<{ labels: Labels; group: PodGroup }>;
}

const matches = (selector: Labels, labels: Labels): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Whether `n` has room for `g` and no anti-affinity either way keeps them apart (`preferred`: preferences too). */
function nodeOk(n: LiveNode, g: PodGroup, preferred: boolean): boolean {
  if (n.free.cpuMillicores < g.request.cpuMillicores || n.free.memoryBytes < g.request.memoryBytes) return false;
  const mine = g.requiredApart.filter((t) => t.per === "node").map((t) => t.selector);
  if (preferred) mine.push(...g.preferredApart);
  if (n.live.some((p) => mine.some((s) => matches(s, p.labels)))) return false;
  // An existing pod's required anti-affinity keeps the newcomer away too.
  return !n.live.some((p) => p.group.requiredApart.some((t) => t.per === "node" && matches(t.selector, g.labels)));
}

/** Whether `n` can become a bigger type that also holds `g` (constraints as nodeOk's, room aside); grows it if so. */
function grow(n: LiveNode, g: PodGroup, o: PackOptions): boolean {
  const unlimited = { ...n, free: { cpuMillicores: Infinity, memoryBytes: Infinity } };
  if (!nodeOk(unlimited, g, o.preferences === "strict")) return false;
  const held = n.live.reduce(
    (sum, p) => ({
      cpuMillicores: sum.cpuMillicores + p.group.request.cpuMillicores,
      memoryBytes: sum.memoryBytes + p.group.request.memoryBytes,
    }),
    { ...g.request },
  );
  const type = o.typeFor(held);
  const a = type === undefined ? undefined : allocatableFor(type);
  if (type === undefined || a === undefined) return false;
  n.type = type;
  n.free = {
    cpuMillicores: a.cpuMillicores - (held.cpuMillicores - g.request.cpuMillicores),
    memoryBytes: a.memoryBytes - (held.memoryBytes - g.request.memoryBytes),
  };
  return true;
}

/** The nodes launched for `g`'s phase, fewest pods first (Karpenter's order for its in-flight NodeClaims). */
const inFlightFor = (nodes: readonly LiveNode[], g: PodGroup): LiveNode[] =>
  nodes.filter((n) => n.phase === g.phase).sort((a, b) => a.pods.length - b.pods.length);

/** A phase's pods in the order they are placed: the groups' order, or (Karpenter's) largest request first. */
function phasePods(groups: readonly PodGroup[], phase: Phase, largestFirst: boolean): { g: PodGroup; i: number }[] {
  const pods = groups
    .filter((x) => x.phase === phase)
    .flatMap((g) => Array.from({ length: g.count }, (_, i) => ({ g, i })));
  if (largestFirst)
    pods.sort(
      (a, b) =>
        b.g.request.cpuMillicores - a.g.request.cpuMillicores || b.g.request.memoryBytes - a.g.request.memoryBytes,
    );
  return pods;
}

export interface PackOptions {
  zones: string[];
  typeFor: (r: Allocatable) => string | undefined;
  preferences: "relaxed" | "strict";
  /**
   * Karpenter's own plan (its scheduler: sigs.k8s.io/karpenter at KARPENTER_CORE_VERSION,
   * pkg/controllers/provisioning/scheduling: queue.go sorts pods by CPU then memory, largest first; scheduler.go
   * `add` tries existing nodes, then the in-flight NodeClaims with the fewest pods first, then a new one): a pod no
   * launched node takes joins a node
   * launched in the same phase when the constraints allow it and a bigger type (`typeFor` of the node's requests
   * plus the pod's) holds them all (an in-flight NodeClaim narrowed to larger types), and only then gets a node of
   * its own. Measured against real Karpenter: tests/e2e/support/karpenter-decides.ts. @default false
   */
  inFlight?: boolean;
}

/** Places every pod of `groups`; `typeFor` names the instance type Karpenter launches for a pod's requests. */
export function packPods(groups: readonly PodGroup[], o: PackOptions): Packing {
  const nodes: LiveNode[] = [];
  const unschedulable: string[] = [];
  const placedIn = (zone: string): Array<{ labels: Labels; group: PodGroup }> =>
    nodes.filter((n) => n.zone === zone).flatMap((n) => n.live);

  const place = (g: PodGroup, index: number): void => {
    let zones = (g.zones ?? o.zones).filter((z) => o.zones.includes(z));
    for (const t of g.requiredApart.filter((x) => x.per === "zone"))
      zones = zones.filter((z) => !placedIn(z).some((p) => matches(t.selector, p.labels)));
    const spread = g.spreadOver;
    if (spread !== undefined) {
      const count = (z: string): number => placedIn(z).filter((p) => matches(spread, p.labels)).length;
      const least = Math.min(...o.zones.map(count));
      zones = zones.filter((z) => count(z) === least);
    }
    const name = `${g.name}-${index}`;
    const inZones = nodes.filter((n) => zones.includes(n.zone));
    const node =
      inZones.find((n) => nodeOk(n, g, true)) ??
      (o.preferences === "relaxed" ? inZones.find((n) => nodeOk(n, g, false)) : undefined) ??
      (o.inFlight === true ? inFlightFor(inZones, g).find((n) => grow(n, g, o)) : undefined) ??
      launch(g, zones);
    if (node === undefined) {
      unschedulable.push(name);
      return;
    }
    node.free = {
      cpuMillicores: node.free.cpuMillicores - g.request.cpuMillicores,
      memoryBytes: node.free.memoryBytes - g.request.memoryBytes,
    };
    node.live.push({ labels: g.labels, group: g });
    node.pods.push(name);
  };

  const launch = (g: PodGroup, zones: string[]): LiveNode | undefined => {
    const type = o.typeFor(g.request);
    const allocatable = type === undefined ? undefined : allocatableFor(type);
    const zone = zones[0];
    if (type === undefined || allocatable === undefined || zone === undefined) return undefined;
    const n: LiveNode = { zone, type, phase: g.phase, pods: [], free: { ...allocatable }, live: [] };
    nodes.push(n);
    return n;
  };

  for (const phase of ["release", "benchmark", "drill"] as const) {
    // The benchmark's pods have completed before the drill's load starts.
    if (phase === "drill") {
      for (const n of nodes) {
        for (const p of n.live.filter((x) => x.group.phase === "benchmark")) {
          n.free = {
            cpuMillicores: n.free.cpuMillicores + p.group.request.cpuMillicores,
            memoryBytes: n.free.memoryBytes + p.group.request.memoryBytes,
          };
        }
        n.live = n.live.filter((x) => x.group.phase !== "benchmark");
      }
    }
    for (const { g, i } of phasePods(groups, phase, o.inFlight === true)) place(g, i);
  }
  return { nodes: nodes.map(({ zone, type, phase, pods }) => ({ zone, type, phase, pods })), unschedulable };
}
