/**
 * Where the benchmark's clients are when the data transfer is priced (config `cost.clientZones`,
 * `vbench local --client-zones`; benchmarks/cost/transfer.ts): `spread`, evenly over the
 * deployment's zones, or `primary`, all in the primary's zone (cluster mode: the zone holding the
 * most primaries, ties to the first by name).
 */
export const CLIENT_ZONES = ["spread", "primary"] as const;
export type ClientZones = (typeof CLIENT_ZONES)[number];
