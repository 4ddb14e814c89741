/**
 * One measured test's data transfer as recorded (raw/transfer-<mode>.json, the stack report's
 * `benchmark.transfer`), and the two columns it gives its row (results.csv
 * `cross_zone_bytes_per_s`, `transfer_usd_per_hour`). Pure: the figures are transfer.ts's, priced
 * at the price table's inter-AZ rate.
 */
import { z } from "zod";
import type { ResultRow } from "../run/result-row.js";
import { CATCH_UP_MS } from "../run/net-bytes.js";
import {
  BENCHMARK_TEST_COMMANDS,
  BENCHMARK_TESTS,
  READ_COMMANDS,
  type BenchmarkTest,
} from "../../vocabulary/workload.js";
import { interAzTransferPerGB, sourceRead, type PriceTable } from "./prices.js";
import {
  CLIENT_ZONES,
  placeMembers,
  transferFigures,
  transferUsdPerHour,
  type MemberBytes,
  type ZoneTopology,
} from "./transfer.js";

const bytes = z.number();
const rateSchema = z.strictObject({
  region: z.string(),
  usdPerGBEachDirection: z.number().nonnegative().nullable(),
  /** The price table's source id and the date it was read; null with `missing`. */
  source: z.string().nullable(),
  missing: z.string().optional(),
});
const figuresSchema = z.strictObject({
  clientBytesPerOp: bytes,
  replicationBytesPerOp: bytes,
  crossZone: z.strictObject({ client: bytes, replication: bytes, bus: bytes.nullable(), total: bytes }),
  bus: z.string(),
  readSaving: bytes.nullable(),
});
export const transferRecordSchema = z.strictObject({
  test: z.string(),
  /** The row's path note (replication: direct or through the write endpoint), "" when none. */
  path: z.string(),
  rps: z.number().nonnegative(),
  requests: z.int().min(0),
  seconds: z.number().nullable(),
  members: z.array(
    z.strictObject({
      member: z.string(),
      zone: z.string().nullable(),
      role: z.enum(["primary", "replica"]),
      clientBytes: bytes.nullable(),
      replInputBytes: bytes.nullable(),
      busSentBytes: bytes.nullable(),
    }),
  ),
  figures: figuresSchema.nullable(),
  /** Why there are no figures. */
  missing: z.string().optional(),
  /** A caveat on the figures (a replica behind its primary's stream at a snapshot). */
  note: z.string().optional(),
  /** A mix: what the load generator itself counted on its sockets (vload), beside the members' client bytes. */
  generatorBytes: z.strictObject({ written: z.int().min(0), read: z.int().min(0) }).optional(),
  usdPerHour: z.number().nullable(),
  readSavingUsdPerHour: z.number().nullable(),
});
/** One mode's transfer: the placement assumed, the rate, one record per measured test. */
export const transferFileSchema = z.strictObject({
  mode: z.enum(["replication", "cluster"]),
  placement: z.enum(CLIENT_ZONES),
  clientZones: z.array(z.string()),
  zones: z.array(z.string()),
  rate: rateSchema,
  records: z.array(transferRecordSchema),
});

export type TransferRate = z.infer<typeof rateSchema>;
export type TransferRecord = z.infer<typeof transferRecordSchema>;
export type TransferFile = z.infer<typeof transferFileSchema>;

/** The region's inter-AZ rate from the table, or why it is missing. */
export function transferRate(table: PriceTable, region: string): TransferRate {
  const l = interAzTransferPerGB(table, region);
  return l.usd === null
    ? { region, usdPerGBEachDirection: null, source: null, missing: l.missing }
    : { region, usdPerGBEachDirection: l.usd, source: sourceRead(table, l.source) };
}

const isRead = (test: string): boolean => {
  const t = test.toLowerCase();
  return (
    (BENCHMARK_TESTS as readonly string[]).includes(t) && READ_COMMANDS.has(BENCHMARK_TEST_COMMANDS[t as BenchmarkTest])
  );
};

export interface RecordInput {
  test: string;
  path: string;
  rps: number;
  requests: number;
  deltas: readonly MemberBytes[];
  topology: ZoneTopology;
  clientZones: readonly string[];
  cluster: boolean;
  rate: TransferRate;
  /** A mix: the load generator's own byte counts (MixResult.generator.bytes). */
  generatorBytes?: { written: number; read: number };
}

/** A test's record: its members' bytes, the figures and their price, or why not (`missing`). */
export function transferRecord(i: RecordInput): TransferRecord {
  const placedOrWhy = placeMembers(i.deltas, i.topology);
  const placed = "placed" in placedOrWhy ? placedOrWhy.placed : [];
  const seconds = Math.max(0, ...i.deltas.map((d) => d.seconds ?? 0)) || null;
  const members = i.deltas.map((d) => ({
    member: d.member,
    zone: placed.find((p) => p.member === d.member)?.zone ?? null,
    role: d.primary ? ("primary" as const) : ("replica" as const),
    clientBytes: d.net === undefined ? null : d.net.input - d.net.replInput + d.net.output - d.net.replOutput,
    replInputBytes: d.net?.replInput ?? null,
    busSentBytes: d.net?.busSent ?? null,
  }));
  const lagged = i.deltas.filter((d) => d.lagged).map((d) => d.member);
  const note =
    lagged.length === 0
      ? {}
      : {
          note: `${lagged.join(", ")} had not applied its primary's stream within ${CATCH_UP_MS / 1000} s at a snapshot: some stream bytes fall in a neighbouring test`,
        };
  const generator =
    i.generatorBytes === undefined
      ? {}
      : { generatorBytes: { written: i.generatorBytes.written, read: i.generatorBytes.read } };
  const base = {
    test: i.test,
    path: i.path,
    rps: i.rps,
    requests: i.requests,
    seconds,
    members,
    ...note,
    ...generator,
  };
  const none = { figures: null, usdPerHour: null, readSavingUsdPerHour: null };
  if ("missing" in placedOrWhy) return { ...base, ...none, missing: placedOrWhy.missing };
  if (!(i.requests > 0)) return { ...base, ...none, missing: "the run recorded no requests" };
  const figures = transferFigures({
    members: placed,
    topology: i.topology,
    clientZones: i.clientZones,
    requests: i.requests,
    rps: i.rps,
    seconds: seconds ?? undefined,
    cluster: i.cluster,
    read: isRead(i.test),
  });
  const usd = i.rate.usdPerGBEachDirection;
  return {
    ...base,
    figures,
    usdPerHour: usd === null ? null : transferUsdPerHour(figures.crossZone.total, usd),
    readSavingUsdPerHour:
      usd === null || figures.readSaving === null ? null : transferUsdPerHour(figures.readSaving, usd),
    ...(usd === null ? { missing: `no inter-AZ rate: ${i.rate.missing ?? "not in the price table"}` } : {}),
  };
}

/** The row's transfer columns: null (written empty, "not measured") without figures or a rate. */
export function transferColumns(
  r: TransferRecord | undefined,
): Required<Pick<ResultRow, "cross_zone_bytes_per_s" | "transfer_usd_per_hour">> {
  return {
    cross_zone_bytes_per_s: r?.figures ? Math.round(r.figures.crossZone.total) : null,
    transfer_usd_per_hour: r?.usdPerHour ?? null,
  };
}
