/**
 * A deployed stack's data transfer, pure: the benchmark Job's rows, its mix result (every member's
 * byte deltas, read by the pod around the mix: mix-served.ts), and the members' zones from the
 * topology check's report (pod → node → zone) give the transfer file of the stack report
 * (`benchmark.transfer`) and the rows' two transfer columns. A mix's bytes are its MIX row's.
 *
 * valkey-benchmark rows are not measured: the Job's script (components/benchmark/job-script.ts)
 * runs valkey-benchmark only and reads no member's INFO; reading every member would need the
 * members' addresses in the pod and the benchmark NetworkPolicy to admit them, which only a mix
 * does today. Their record says so; their columns stay empty, never 0.
 */
import type { MixJobExtras } from "../run/mix-job-result.js";
import type { ResultMode, ResultRow } from "../run/result-row.js";
import { clientZonesFor, type ClientZones, type MemberBytes, type ZoneTopology } from "./transfer.js";
import {
  transferColumns,
  transferRecord,
  type TransferFile,
  type TransferRate,
  type TransferRecord,
} from "./transfer-record.js";

export const JOB_NOT_MEASURED =
  "the valkey-benchmark Job reads no member's INFO (its script runs valkey-benchmark only; a mix, `benchmark.mix`, reads every member's byte counters)";
export const NO_TOPOLOGY = "no topology report (checks.verify is off), so the members' zones are unknown";

export interface StackTransferInput {
  mode: ResultMode;
  rows: readonly ResultRow[];
  mix: MixJobExtras | null | undefined;
  /** The topology check's report; undefined when checks.verify is off. */
  topology: ZoneTopology | undefined;
  /** config `aws.zones` (byo: the zones the release spreads over). */
  zones: readonly string[];
  placement: ClientZones;
  rate: TransferRate;
}

const missingRecord = (r: ResultRow, missing: string): TransferRecord => ({
  test: r.test,
  path: "",
  rps: r.rps,
  requests: r.requests,
  seconds: null,
  members: [],
  figures: null,
  missing,
  usdPerHour: null,
  readSavingUsdPerHour: null,
});

/** The stack's transfer file and the rows with their columns (see the header). */
export function stackTransfer(i: StackTransferInput): { rows: ResultRow[]; transfer: TransferFile } {
  const topology = i.topology ?? { shards: [] };
  const clientZones = clientZonesFor(i.placement, topology, i.zones);
  const members = (i.mix?.served.members ?? []) as MemberBytes[];
  const records = i.rows.flatMap((r): TransferRecord[] => {
    if (i.mix === null || i.mix === undefined) return [missingRecord(r, JOB_NOT_MEASURED)];
    if (r.test !== "MIX") return [];
    if (i.topology === undefined) return [missingRecord(r, NO_TOPOLOGY)];
    if (members.length === 0)
      return [
        missingRecord(r, "the Job's result line carries no member byte counters (a runner older than this version)"),
      ];
    return [
      transferRecord({
        test: r.test,
        path: "",
        rps: r.rps,
        requests: r.requests,
        deltas: members,
        topology,
        clientZones,
        cluster: i.mode === "cluster",
        rate: i.rate,
        ...(i.mix.generator === undefined ? {} : { generatorBytes: i.mix.generator.bytes }),
      }),
    ];
  });
  return {
    rows: i.rows.map((r) => ({
      ...r,
      ...transferColumns(records.find((x) => x.test === r.test && x.figures !== null)),
    })),
    transfer: { mode: i.mode, placement: i.placement, clientZones, zones: [...i.zones], rate: i.rate, records },
  };
}
