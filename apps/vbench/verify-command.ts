/**
 * vbench verify --mode cluster|replication --seed HOST:PORT[,HOST:PORT...]
 *     [--zones FILE] [--password-env NAME] [--expect-primaries N]
 *     [--expect-replicas-per-primary M] [--expect-replicas N] [--json]
 * vbench verify --mode replication --sentinel HOST:PORT[,HOST:PORT...] [--master-name NAME]
 *     [--sentinel-password-env NAME] [--seed ...] [...]
 *
 * Exit 0 healthy, 1 topology wrong (the report names the failure codes; a primary the Sentinels
 * name but that cannot be reached is PRIMARY_UNREACHABLE), 2 usage or connection error (with
 * --json also printed as `{ ok: false, error: { code, message, exitCode } }`). Passwords come only from
 * the environment variables named by --password-env / --sentinel-password-env (the Sentinels
 * use the data nodes' password unless the latter is given).
 */
import { Option, type Command } from "commander";
import { ConnectionError, DirectConnector } from "../../core/topology/connector.js";
import { parseEndpointList, type NodeEndpoint } from "../../vocabulary/endpoint.js";
import { loadZoneFile, type ZoneSource } from "../../core/topology/zones.js";
import { formatTopologyReport } from "../../core/verify/format-report.js";
import { verifyTopology } from "../../core/verify/verify-topology.js";
import type { VerifyExpectations } from "../../core/verify/verify-types.js";
import { DEFAULT_MASTER_NAME } from "../../pod/replication-start.js";
import { CheckFailed, connectionFailed, nonNegativeInt, positiveInt, UsageError } from "./errors.js";

interface VerifyFlags {
  mode?: "cluster" | "replication";
  seed?: NodeEndpoint[];
  sentinel?: NodeEndpoint[];
  masterName: string;
  sentinelPasswordEnv?: string;
  zones?: string;
  passwordEnv?: string;
  expectPrimaries?: number;
  expectReplicasPerPrimary?: number;
  expectReplicas?: number;
  json?: boolean;
}

const endpointList =
  (flag: string) =>
  (value: string): NodeEndpoint[] => {
    try {
      return parseEndpointList(value);
    } catch (err) {
      throw new UsageError(`${flag}: ${(err as Error).message}`);
    }
  };

function expectations(mode: "cluster" | "replication", f: VerifyFlags): VerifyExpectations {
  const e: VerifyExpectations = {};
  if (mode === "replication") {
    if (f.expectPrimaries !== undefined && f.expectPrimaries !== 1) {
      throw new UsageError(`--expect-primaries ${f.expectPrimaries}: a replication set has exactly one primary`);
    }
    if (
      f.expectReplicas !== undefined &&
      f.expectReplicasPerPrimary !== undefined &&
      f.expectReplicas !== f.expectReplicasPerPrimary
    ) {
      throw new UsageError(
        "--expect-replicas and --expect-replicas-per-primary disagree (one primary in replication mode)",
      );
    }
  }
  if (f.expectPrimaries !== undefined) e.primaries = f.expectPrimaries;
  if (f.expectReplicasPerPrimary !== undefined) e.replicasPerPrimary = f.expectReplicasPerPrimary;
  if (f.expectReplicas !== undefined) e.replicas = f.expectReplicas;
  return e;
}

function password(envName: string | undefined, flag = "--password-env"): string | undefined {
  if (envName === undefined) return undefined;
  const value = process.env[envName];
  if (value === undefined || value === "")
    throw new UsageError(`${flag} ${envName}: environment variable ${envName} is not set`);
  return value;
}

export async function runVerify(f: VerifyFlags): Promise<void> {
  if (f.mode === undefined) throw new UsageError("verify: --mode cluster|replication is required");
  if (f.sentinel !== undefined && f.mode !== "replication")
    throw new UsageError("verify: --sentinel works with --mode replication only");
  if (f.seed === undefined && f.sentinel === undefined) {
    throw new UsageError(
      `verify: --seed HOST:PORT[,HOST:PORT...] is required${f.mode === "replication" ? " (or --sentinel HOST:PORT[,...])" : ""}`,
    );
  }
  if (!/^[A-Za-z0-9._-]+$/.test(f.masterName))
    throw new UsageError(`--master-name '${f.masterName}': expected [A-Za-z0-9._-]+`);
  const expect = expectations(f.mode, f);
  let zones: ZoneSource | undefined;
  if (f.zones !== undefined) {
    try {
      zones = loadZoneFile(f.zones);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const dataPassword = password(f.passwordEnv);
  const connector = new DirectConnector({ password: dataPassword });
  const sentinelConnector =
    f.sentinel === undefined
      ? undefined
      : new DirectConnector({
          password:
            f.sentinelPasswordEnv === undefined
              ? dataPassword
              : password(f.sentinelPasswordEnv, "--sentinel-password-env"),
          connectTimeoutMs: 2000,
        });
  const sentinel =
    f.sentinel === undefined || sentinelConnector === undefined
      ? undefined
      : { endpoints: f.sentinel, masterName: f.masterName, connector: sentinelConnector };
  let report;
  try {
    report = await verifyTopology({ mode: f.mode, seeds: f.seed ?? [], connector, zones, expect, sentinel });
  } catch (err) {
    if (err instanceof ConnectionError) throw connectionFailed(err);
    throw err;
  } finally {
    await connector.close();
    await sentinelConnector?.close();
  }
  process.stdout.write(`${f.json ? JSON.stringify(report, null, 2) : formatTopologyReport(report)}\n`);
  if (!report.ok) {
    const codes = [...new Set(report.failures.map((x) => x.code))].join(", ");
    const failed = new CheckFailed(`topology verification failed: ${codes}`);
    throw f.json ? failed.markReported() : failed;
  }
}

export function registerVerifyCommand(program: Command): void {
  program
    .command("verify")
    .description("verify a live topology: cluster state and slots, replica links, cross-AZ pairing, expected shape")
    .addOption(new Option("--mode <mode>", "topology mode").choices(["cluster", "replication"]))
    .option("--seed <list>", "HOST:PORT[,HOST:PORT...] to discover from (first that answers)", endpointList("--seed"))
    .option(
      "--sentinel <list>",
      "replication mode: Sentinels HOST:PORT[,HOST:PORT...]; the primary is discovered from any reachable one",
      endpointList("--sentinel"),
    )
    .option("--master-name <name>", "Sentinel master name (the stack's)", DEFAULT_MASTER_NAME)
    .option(
      "--sentinel-password-env <name>",
      "name of the environment variable holding the Sentinels' password (default: the --password-env one)",
    )
    .option("--zones <file>", 'JSON zone map {"host:port": "zone"}; without it zone checks are skipped')
    .option("--password-env <name>", "name of the environment variable holding the Valkey password")
    .option("--expect-primaries <n>", "expected number of primaries", positiveInt("--expect-primaries"))
    .option(
      "--expect-replicas-per-primary <m>",
      "expected replicas per primary",
      nonNegativeInt("--expect-replicas-per-primary"),
    )
    .option(
      "--expect-replicas <n>",
      "expected replicas (replication mode; cluster mode: in total)",
      nonNegativeInt("--expect-replicas"),
    )
    .option("--json", "print the report as JSON")
    .action(async (flags: VerifyFlags) => runVerify(flags));
}
