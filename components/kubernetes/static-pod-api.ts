/**
 * A PodApi over fixed data: pods and nodes held in memory, equality label selectors. The unit
 * and integration tests' double for discovery, zones and the bootstrap when they need no API
 * server (the e2e suite, tests/e2e/, runs a real kube-apiserver with kwok nodes instead), and
 * usable wherever the pods are known up front.
 */
import { ZONE_LABEL } from "../../vocabulary/labels.js";
import type { NodeRecord, PodApi, PodRecord } from "./pod-api.js";

/** Whether `labels` match a selector of `k=v`, `k==v`, `k!=v` and `k` terms, comma-separated. */
export function matchesSelector(labels: Record<string, string>, selector: string): boolean {
  return selector
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
    .every((term) => {
      const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
      if (m === null) return term in labels;
      const [, key = "", op, value] = m;
      return op === "!=" ? labels[key] !== value : labels[key] === value;
    });
}

export interface StaticPod {
  name: string;
  namespace?: string;
  podIP?: string;
  nodeName?: string;
  /** @default true */
  ready?: boolean;
  labels?: Record<string, string>;
  subdomain?: string;
  ports?: Record<string, number>;
  /** Init containers' termination messages (PodRecord.initMessages). @default none */
  initMessages?: Record<string, string[]>;
}

export class StaticPodApi implements PodApi {
  /** Every getNode call, in order. */
  readonly nodeReads: string[] = [];
  /** Every listPods call as `namespace|selector`. */
  readonly podLists: string[] = [];

  /** `nodes`: node name -> zone (or full labels). */
  constructor(
    readonly pods: StaticPod[],
    readonly nodes: Record<string, string | Record<string, string>>,
  ) {}

  listPods(namespace: string, selector: string): Promise<PodRecord[]> {
    this.podLists.push(`${namespace}|${selector}`);
    return Promise.resolve(
      this.pods
        .filter((p) => (p.namespace ?? namespace) === namespace && matchesSelector(p.labels ?? {}, selector))
        .map((p) => ({
          name: p.name,
          podIP: p.podIP,
          nodeName: p.nodeName,
          ready: p.ready ?? true,
          labels: p.labels ?? {},
          subdomain: p.subdomain,
          ports: p.ports ?? {},
          initMessages: p.initMessages ?? {},
        })),
    );
  }

  getNode(name: string): Promise<NodeRecord> {
    this.nodeReads.push(name);
    const n = this.nodes[name];
    if (n === undefined) return Promise.reject(new Error(`nodes "${name}" not found`));
    return Promise.resolve({ name, labels: typeof n === "string" ? { [ZONE_LABEL]: n } : n });
  }
}
