/**
 * The shard-scaling sweep's arithmetic, pure: the shard list, scale and scaling exponent per
 * test and the CPU pinning plan (when the client was the limit: run/client-cpu.ts).
 *
 *   scale    = rps at this step ÷ rps at the first step (same test)
 *   exponent = ln(scale) ÷ ln(shards ÷ first step's shards); 1.0 is linear, 0 is flat
 */

export class SweepInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SweepInputError";
  }
}

/** `--shards 1,2,4`: positive whole numbers, strictly increasing, at least two. */
export function parseShardList(text: string): number[] {
  const parts = text.split(",").map((s) => s.trim());
  const bad = parts.filter((s) => !/^\d+$/.test(s) || Number(s) < 1);
  if (bad.length > 0)
    throw new SweepInputError(
      `--shards: ${bad.map((b) => `'${b}'`).join(", ")} is not a positive whole number (e.g. --shards 1,2,4)`,
    );
  const shards = parts.map(Number);
  if (shards.length < 2)
    throw new SweepInputError("--shards needs at least two shard counts to measure scaling (e.g. --shards 1,2)");
  for (let i = 1; i < shards.length; i++) {
    if ((shards[i] as number) <= (shards[i - 1] as number))
      throw new SweepInputError(`--shards must increase strictly (got ${text})`);
  }
  return shards;
}

export interface ScalingInput {
  test: string;
  shards: number;
  rps: number;
}

export interface Scaling {
  /** rps ÷ the first step's rps for the same test; null when that rps is 0 or absent. */
  scale: number | null;
  /** ln(scale) ÷ ln(shards ÷ first shards); null at the first step or when scale is null. */
  exponent: number | null;
}

/** Scale and exponent per row, each test against its own first (fewest-shards) step. */
export function scaling(rows: readonly ScalingInput[]): Scaling[] {
  const first = new Map<string, ScalingInput>();
  for (const r of rows) {
    const f = first.get(r.test);
    if (f === undefined || r.shards < f.shards) first.set(r.test, r);
  }
  return rows.map((r) => {
    const f = first.get(r.test) as ScalingInput;
    const scale = f.rps > 0 && r.rps > 0 ? r.rps / f.rps : null;
    const exponent = scale !== null && r.shards !== f.shards ? Math.log(scale) / Math.log(r.shards / f.shards) : null;
    return { scale, exponent };
  });
}

export interface PinPlan {
  /** CPU of primary i (primary i of every step). */
  primaryCpus: number[];
  /** CPUs left to the benchmark client (and replicas, if any). */
  clientCpus: number[];
}

/**
 * `--pin`: each primary on its own CPU (0, 1, ...), the client on the remaining ones. Refuses
 * when the largest step would leave the client no CPU.
 */
export function pinPlan(cpuCount: number, shards: number): PinPlan {
  if (cpuCount < shards + 1) {
    throw new SweepInputError(
      `--pin needs ${shards + 1} CPUs for ${shards} shard(s) (one per primary plus at least one for the benchmark client); ` +
        `this machine has ${cpuCount}. Use fewer shards or drop --pin.`,
    );
  }
  return {
    primaryCpus: Array.from({ length: shards }, (_, i) => i),
    clientCpus: Array.from({ length: cpuCount - shards }, (_, i) => shards + i),
  };
}

/** A CPU list for taskset -c: [2,3,4,7] → "2-4,7". */
export function cpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(",");
}
