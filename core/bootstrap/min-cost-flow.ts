/**
 * A small min-cost max-flow (successive shortest paths, Bellman-Ford), used by the planner
 * to hand replicas to primaries. Graphs here have tens of vertices, so clarity beats speed.
 * Deterministic: edges are explored in insertion order.
 */

interface Edge {
  to: number;
  cap: number;
  cost: number;
  /** Index of the reverse edge in `adj[to]`. */
  rev: number;
}

export class FlowGraph {
  private readonly adj: Edge[][];

  constructor(readonly size: number) {
    this.adj = Array.from({ length: size }, () => []);
  }

  /** Adds `from -> to` with capacity and per-unit cost; returns a handle for `flowOn`. */
  addEdge(from: number, to: number, cap: number, cost: number): [number, number] {
    const out = this.list(from);
    const back = this.list(to);
    out.push({ to, cap, cost, rev: back.length });
    back.push({ to: from, cap: 0, cost: -cost, rev: out.length - 1 });
    return [from, out.length - 1];
  }

  /** Units currently flowing on the edge returned by `addEdge`. */
  flowOn([from, index]: [number, number]): number {
    const e = this.list(from)[index];
    if (e === undefined) throw new Error(`no edge ${from}#${index}`);
    const back = this.list(e.to)[e.rev];
    return back?.cap ?? 0;
  }

  /** Pushes up to `limit` units from `source` to `sink` at least total cost; returns the flow sent. */
  minCostFlow(source: number, sink: number, limit: number): { flow: number; cost: number } {
    let flow = 0;
    let cost = 0;
    while (flow < limit) {
      const dist = new Array<number>(this.size).fill(Infinity);
      const prev = new Array<[number, number] | undefined>(this.size).fill(undefined);
      dist[source] = 0;
      for (let round = 0; round < this.size; round++) {
        let relaxed = false;
        for (let u = 0; u < this.size; u++) {
          const du = dist[u] ?? Infinity;
          if (du === Infinity) continue;
          this.list(u).forEach((e, i) => {
            if (e.cap > 0 && du + e.cost < (dist[e.to] ?? Infinity)) {
              dist[e.to] = du + e.cost;
              prev[e.to] = [u, i];
              relaxed = true;
            }
          });
        }
        if (!relaxed) break;
      }
      if ((dist[sink] ?? Infinity) === Infinity) break;
      let push = limit - flow;
      for (let v = sink; v !== source;) {
        const [u, i] = prev[v] as [number, number];
        push = Math.min(push, (this.list(u)[i] as Edge).cap);
        v = u;
      }
      for (let v = sink; v !== source;) {
        const [u, i] = prev[v] as [number, number];
        const e = this.list(u)[i] as Edge;
        e.cap -= push;
        (this.list(e.to)[e.rev] as Edge).cap += push;
        v = u;
      }
      flow += push;
      cost += push * (dist[sink] ?? 0);
    }
    return { flow, cost };
  }

  private list(v: number): Edge[] {
    const l = this.adj[v];
    if (l === undefined) throw new Error(`vertex ${v} is outside the graph (size ${this.size})`);
    return l;
  }
}
