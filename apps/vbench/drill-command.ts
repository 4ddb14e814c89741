/**
 * `vbench drill`: one failure drill on a local topology (harness/drill/). Progress on stderr;
 * the drill table line (or --json) on stdout; `--output DIR` writes drill-<mode>-<fault>.json
 * (figures, verifier report, per-write timeline). Exit 0 when ok (healed, nothing unknown, no
 * WAIT-confirmed write lost, acknowledged loss within the fault's promised bound: bounds.ts), 1
 * otherwise, 2 usage, 3 skipped (the fault cannot run on this machine, e.g. partition without root
 * or iptables: `{ "ok": false, "skipped": { "reason" } }` with --json).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { renderDrillTable, renderRollSteps } from "../../core/drill/drill-table.js";
import { FAULTS, type Fault } from "../../vocabulary/faults.js";
import { LOCAL_DRILL_DEFAULTS } from "../../harness/drill/local-drills.js";
import { CLIENT_SETTINGS, DEFAULT_CLIENT_SETTINGS, type ClientSettings } from "../../core/drill/client-settings.js";
import { runDrill, type DrillOptions } from "../../harness/drill/run-drill.js";
import { renderAlertsSeen } from "../../core/drill/alerts-seen.js";
import { renderAofAtKill } from "../../core/drill/aof-at-kill.js";
import { isSkipped, type DrillResult } from "../../core/drill/drill-result.js";
import { intInRange, nonNegativeInt, positiveInt, UsageError } from "./errors.js";
import { guarded } from "./guard.js";

interface DrillFlags {
  mode: string;
  fault: string;
  durationS: number;
  warmupS: number;
  rate: number;
  waitTimeoutMs: number;
  detectionMs: number;
  failoverTimeoutMs: number;
  restartDelayMs: number;
  zoneDownMs: number;
  freezeMs?: number;
  crashRestartDelayMs?: number;
  partitionMs?: number;
  upgradeFrom?: string;
  replicas: number;
  primaries: number;
  replicasPerPrimary: number;
  zones: string;
  output?: string;
  json?: boolean;
  clientSettings: string;
  valkeyPy: boolean;
  metrics?: boolean;
}

/** Exit code of a drill skipped because its fault cannot run on this machine (never 0: not a pass). */
export const SKIPPED_EXIT_CODE = 3;

/** Local defaults (the same as `vbench local --drills`): a drill finishes well under a minute. */
export const DRILL_DEFAULTS = {
  durationS: LOCAL_DRILL_DEFAULTS.durationMs / 1000,
  warmupS: LOCAL_DRILL_DEFAULTS.warmupMs / 1000,
  rate: LOCAL_DRILL_DEFAULTS.rate,
  waitTimeoutMs: LOCAL_DRILL_DEFAULTS.waitTimeoutMs,
  detectionMs: LOCAL_DRILL_DEFAULTS.failureDetectionMs,
  failoverTimeoutMs: LOCAL_DRILL_DEFAULTS.failoverTimeoutMs,
  restartDelayMs: LOCAL_DRILL_DEFAULTS.restartDelayMs,
  zoneDownMs: LOCAL_DRILL_DEFAULTS.zoneDownMs,
} as const;

/**
 * Shape limits of the local drill topologies: every process gets its own 127.0.0.x address
 * (replication: members from .20, Sentinels from .70; cluster: members from .140 to .254).
 * Beyond them a drill would fail late with an address error, so they are usage errors.
 */
const MAX_REPLICAS = 49;
const MAX_CLUSTER_NODES = 115;
const MAX_PRIMARIES = Math.floor(MAX_CLUSTER_NODES / 2);

export function drillOptionsFromFlags(f: DrillFlags): Omit<DrillOptions, "onStep"> {
  if (f.mode !== "cluster" && f.mode !== "replication")
    throw new UsageError(`--mode must be cluster or replication (got '${f.mode}')`);
  if (!(FAULTS as readonly string[]).includes(f.fault))
    throw new UsageError(`--fault must be one of ${FAULTS.join(", ")} (got '${f.fault}')`);
  const zones = f.zones
    .split(",")
    .map((z) => z.trim())
    .filter((z) => z !== "");
  if (zones.length < 2 || new Set(zones).size !== zones.length)
    throw new UsageError(`--zones must name at least two distinct zones (got '${f.zones}')`);
  if (!(CLIENT_SETTINGS as readonly string[]).includes(f.clientSettings))
    throw new UsageError(`--client-settings must be one of ${CLIENT_SETTINGS.join(", ")} (got '${f.clientSettings}')`);
  const nodes = f.primaries * (1 + f.replicasPerPrimary);
  if (f.mode === "cluster" && nodes > MAX_CLUSTER_NODES) {
    throw new UsageError(
      `--primaries ${f.primaries} × (1 + --replicas-per-primary ${f.replicasPerPrimary}) = ${nodes} nodes: a local cluster drill holds at most ${MAX_CLUSTER_NODES}`,
    );
  }
  return {
    mode: f.mode,
    fault: f.fault as Fault,
    durationMs: f.durationS * 1000,
    warmupMs: f.warmupS * 1000,
    rate: f.rate,
    waitTimeoutMs: f.waitTimeoutMs,
    failureDetectionMs: f.detectionMs,
    failoverTimeoutMs: f.failoverTimeoutMs,
    restartDelayMs: f.restartDelayMs,
    zoneDownMs: f.zoneDownMs,
    ...(f.freezeMs === undefined ? {} : { freezeMs: f.freezeMs }),
    ...(f.crashRestartDelayMs === undefined ? {} : { crashRestartDelayMs: f.crashRestartDelayMs }),
    ...(f.partitionMs === undefined ? {} : { partitionMs: f.partitionMs }),
    ...(f.upgradeFrom === undefined ? {} : { upgradeFrom: f.upgradeFrom }),
    replicas: f.replicas,
    primaries: f.primaries,
    replicasPerPrimary: f.replicasPerPrimary,
    zones,
    clientSettings: f.clientSettings as ClientSettings,
    valkeyPy: f.valkeyPy,
    ...(f.metrics === true ? { metrics: true } : {}),
  };
}

export function writeDrillFile(dir: string, r: DrillResult): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `drill-${r.mode}-${r.fault}.json`);
  writeFileSync(path, `${JSON.stringify(r, null, 2)}\n`);
  return path;
}

type IntParser = (flag: string) => (value: string) => number;

/** The drill's integer flags, in help order: flag, help text, parser (it names the flag in its error), default. */
const INT_FLAGS: readonly (readonly [string, string, IntParser, number])[] = [
  [
    "--duration-s <n>",
    "minimum load duration in seconds (the load runs until recovery + 2 s anyway)",
    positiveInt,
    DRILL_DEFAULTS.durationS,
  ],
  ["--warmup-s <n>", "load before the fault, in seconds", positiveInt, DRILL_DEFAULTS.warmupS],
  ["--rate <n>", "writes per second per load stream", positiveInt, DRILL_DEFAULTS.rate],
  [
    "--wait-timeout-ms <n>",
    "WAIT 1 <ms> after each acknowledged write; 0 disables WAIT",
    nonNegativeInt,
    DRILL_DEFAULTS.waitTimeoutMs,
  ],
  [
    "--detection-ms <n>",
    "Sentinel down-after-milliseconds / cluster-node-timeout",
    positiveInt,
    DRILL_DEFAULTS.detectionMs,
  ],
  ["--failover-timeout-ms <n>", "Sentinel failover-timeout", positiveInt, DRILL_DEFAULTS.failoverTimeoutMs],
  [
    "--restart-delay-ms <n>",
    "how long a killed member stays down before its pod starts again",
    nonNegativeInt,
    DRILL_DEFAULTS.restartDelayMs,
  ],
  [
    "--zone-down-ms <n>",
    "how long a killed zone stays down (its pods Pending)",
    nonNegativeInt,
    DRILL_DEFAULTS.zoneDownMs,
  ],
  [
    "--replicas <n>",
    `replication: replicas of the primary (1-${MAX_REPLICAS})`,
    (flag) => intInRange(flag, 1, MAX_REPLICAS),
    2,
  ],
  [
    "--primaries <n>",
    `cluster: primaries (1-${MAX_PRIMARIES}; primaries × (1 + replicas per primary) ≤ ${MAX_CLUSTER_NODES})`,
    (flag) => intInRange(flag, 1, MAX_PRIMARIES),
    3,
  ],
  [
    "--replicas-per-primary <n>",
    `cluster: replicas per primary (1-${MAX_PRIMARIES - 1})`,
    (flag) => intInRange(flag, 1, MAX_PRIMARIES - 1),
    1,
  ],
];

export function registerDrillCommand(program: Command): void {
  const command = program
    .command("drill")
    .description(
      "failure drill on a local topology: write load, one fault, measured until the verifier passes again (exit 0 when healed, no WAIT-confirmed write lost and acknowledged loss within the fault's promised bound; 1 otherwise)",
    )
    .requiredOption("--mode <mode>", "cluster | replication")
    .requiredOption("--fault <fault>", FAULTS.join(" | "));
  for (const [flag, help, parser, value] of INT_FLAGS)
    command.option(flag, help, parser(flag.split(" ")[0] ?? flag), value);
  command
    .option(
      "--freeze-ms <n>",
      "freeze: how long the primary stays SIGSTOPped (default: --detection-ms + --restart-delay-ms)",
      positiveInt("--freeze-ms"),
    )
    .option(
      "--crash-restart-delay-ms <n>",
      "crash-restart: how long the killed primary stays down before restarting in place (default: half of --detection-ms)",
      nonNegativeInt("--crash-restart-delay-ms"),
    )
    .option(
      "--partition-ms <n>",
      "partition: how long the primary stays cut off from its Sentinels and replicas / the other cluster members (default: --detection-ms + --restart-delay-ms; needs root and iptables, else skipped with exit 3)",
      positiveInt("--partition-ms"),
    )
    .option(
      "--upgrade-from <path>",
      "upgrade: the older valkey-server the topology starts on before every member is rolled to the current one (default: $VALKEY_SERVER_PREVIOUS, which .ci/setup sets; without one the drill is skipped with exit 3)",
    )
    .option("--zones <csv>", "zone names assigned round-robin", "zone-a,zone-b,zone-c")
    .option(
      "--client-settings <which>",
      "how the load's clients follow a failover (docs/client-settings.md): recommended (reconnect on NOREPLICAS/READONLY/LOADING/MASTERDOWN and the Sentinels' +switch-master) | defaults (the libraries' own); recorded in the row",
      DEFAULT_CLIENT_SETTINGS,
    )
    .option(
      "--no-valkey-py",
      "leave out the valkey-py writer (the second client library; needs $VALKEY_PY_PYTHON, which .ci/setup sets)",
    )
    .option(
      "--metrics",
      "watch the drill with live metrics: redis_exporter beside every member and Sentinel, HAProxy's endpoint and a real Prometheus with the mode's alert rules (Debian's prometheus and prometheus-redis-exporter, which .ci/setup installs); the row records each alert's pending, firing and resolved times",
    )
    .option("--output <dir>", "write drill-<mode>-<fault>.json here")
    .option("--json", "print the result as one JSON object")
    .action(async (flags: DrillFlags) => {
      const options = drillOptionsFromFlags(flags);
      const result = await guarded("drill", "every process it started", () =>
        runDrill({ ...options, onStep: (line) => process.stderr.write(`drill: ${line}\n`) }),
      );
      if (isSkipped(result)) {
        process.stdout.write(
          flags.json
            ? `${JSON.stringify({ ...result, file: null }, null, 2)}\n`
            : `${result.mode} ${result.fault}: SKIPPED: ${result.skipped.reason}\n`,
        );
        process.exitCode = SKIPPED_EXIT_CODE;
        return;
      }
      const file = flags.output === undefined ? undefined : writeDrillFile(resolve(flags.output), result);
      if (flags.json) {
        const { timeline: _t, ...rest } = result;
        process.stdout.write(`${JSON.stringify({ ...rest, file: file ?? null }, null, 2)}\n`);
      } else {
        const steps = [
          ...renderRollSteps([result]),
          ...(result.alerts === undefined ? [] : [`alerts: ${renderAlertsSeen(result.alerts)}`]),
          ...(result.aofAtKill === undefined ? [] : [renderAofAtKill(result.aofAtKill)]),
        ];
        process.stdout.write(
          `${renderDrillTable([result])}\n${steps.length === 0 ? "" : `\n${steps.join("\n")}\n`}${file === undefined ? "" : `\nresult: ${file}\n`}`,
        );
      }
      if (!result.ok) process.exitCode = 1;
    });
}
