/**
 * The local comparison's data transfer (benchmarks/cost/transfer.ts): every member's byte
 * counters around each benchmark test of both topologies (valkey-benchmark runs through
 * runWorkload's `aroundRun`, a mix through runMix's own snapshots), the members' zones from the
 * verifier's report (the named zones, round-robin), the clients placed by `cost.clientZones`,
 * priced at the table's inter-AZ rate of `region` (locally: what the traffic would cost on AWS).
 * Gives each row its two columns, and writes raw/transfer-<mode>.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clientZonesFor, type ClientZones, type ZoneTopology } from "../../benchmarks/cost/transfer.js";
import {
  transferColumns,
  transferRate,
  transferRecord,
  type TransferFile,
  type TransferRate,
} from "../../benchmarks/cost/transfer-record.js";
import { loadPriceTable } from "../../benchmarks/cost/prices.js";
import { renderTransferMarkdown } from "../../benchmarks/report/transfer-section.js";
import type { RunProgressEvent, RunWorkloadOptions } from "../../benchmarks/run/benchmark-runner.js";
import { MemberBytesRecorder } from "../../benchmarks/run/mix-served.js";
import type { MixResult } from "../../benchmarks/run/mix-runner.js";
import type { ResultMode, ResultRow } from "../../benchmarks/run/result-row.js";
import type { NodeEndpoint } from "../../vocabulary/endpoint.js";

export type { ClientZones };

/** A local run has no region: its traffic is priced at this region's inter-AZ rate (prices.json). */
export const LOCAL_PRICE_REGION = "us-east-1";

export interface TransferLedgerOptions {
  /** The deployment's zones (the named zones). */
  zones: readonly string[];
  placement: ClientZones;
  /** @default the price table's LOCAL_PRICE_REGION rate */
  rate?: TransferRate;
  password?: string;
}

/** What the local comparison's options add for data transfer (local-comparison.ts). */
export interface LocalTransferOptions {
  /**
   * Where the clients are for the data transfer figures (priced at LOCAL_PRICE_REGION's inter-AZ rate).
   * @default "spread"
   */
  clientZones?: ClientZones;
}

/**
 * One benchmark step's hooks: spread `hooks(onProgress)` into runWorkload's options, or `mix` the mix's result; then
 * `columns` its rows.
 */
export interface TransferStep {
  /**
   * runWorkload's `aroundRun`, and its progress callback wrapped so a test's "done" event records that test's bytes.
   */
  hooks: (inner: (e: RunProgressEvent) => void) => Pick<RunWorkloadOptions, "aroundRun" | "onProgress">;
  mix: (r: MixResult) => void;
  /** The rows with their transfer columns (null where this step measured none: a mix's per-command rows). */
  columns: (rows: readonly ResultRow[]) => ResultRow[];
}

export class TransferLedger {
  private readonly files = new Map<ResultMode, TransferFile>();
  private readonly rate: TransferRate;
  constructor(private readonly o: TransferLedgerOptions) {
    this.rate = o.rate ?? transferRate(loadPriceTable(), LOCAL_PRICE_REGION);
  }

  step(
    mode: ResultMode,
    path: string,
    members: readonly NodeEndpoint[],
    topology: ZoneTopology | undefined,
  ): TransferStep {
    const t = topology ?? { shards: [] };
    const file = this.fileOf(mode, t);
    const recorder = new MemberBytesRecorder(members, this.o.password);
    const start = file.records.length;
    const record = (
      row: ResultRow,
      deltas: MixResult["served"]["members"],
      generatorBytes?: MixResult["generator"]["bytes"],
    ) =>
      file.records.push(
        transferRecord({
          test: row.test,
          path,
          rps: row.rps,
          requests: row.requests,
          deltas,
          topology: t,
          clientZones: file.clientZones,
          cluster: mode === "cluster",
          rate: this.rate,
          ...(generatorBytes === undefined ? {} : { generatorBytes }),
        }),
      );
    return {
      hooks: (inner) => ({
        aroundRun: recorder.around,
        onProgress: (e) => {
          if (e.phase === "done" && e.row !== undefined) record(e.row, recorder.last);
          inner(e);
        },
      }),
      mix: (r) => {
        const total = r.rows.find((x) => x.test === "MIX");
        if (total !== undefined) record(total, r.served.members, r.generator.bytes);
      },
      columns: (rows) => {
        const mine = file.records.slice(start);
        return rows.map((r) => ({ ...r, ...transferColumns(mine.find((x) => x.test === r.test)) }));
      },
    };
  }

  private fileOf(mode: ResultMode, t: ZoneTopology): TransferFile {
    let f = this.files.get(mode);
    if (f === undefined) {
      const zones = [...this.o.zones];
      f = {
        mode,
        placement: this.o.placement,
        clientZones: clientZonesFor(this.o.placement, t, zones),
        zones,
        rate: this.rate,
        records: [],
      };
      this.files.set(mode, f);
    }
    return f;
  }

  /** Every mode's file, replication before cluster. */
  all(): TransferFile[] {
    return (["replication", "cluster"] as const).flatMap((m) => {
      const f = this.files.get(m);
      return f === undefined ? [] : [f];
    });
  }

  /** Writes raw/transfer-<mode>.json per mode measured; returns summary.md's "Data transfer" section. */
  write(rawDir: string): string[] {
    mkdirSync(rawDir, { recursive: true });
    for (const f of this.all())
      writeFileSync(join(rawDir, `transfer-${f.mode}.json`), `${JSON.stringify(f, null, 2)}\n`);
    return renderTransferMarkdown(this.all());
  }
}
