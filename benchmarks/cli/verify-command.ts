/**
 * vbench verify --mode cluster|replication --seed HOST:PORT[,HOST:PORT...]
 *     [--zones FILE] [--password-env NAME] [--expect-primaries N]
 *     [--expect-replicas-per-primary M] [--expect-replicas N] [--json]
 *
 * Exit 0 healthy, 1 topology wrong, 2 usage or connection error. The password comes only
 * from the environment variable named by --password-env.
 */
import { Option, type Command } from "commander";
import { ConnectionError, DirectConnector } from "../topology/connector.js";
import { parseEndpointList, type NodeEndpoint } from "../topology/endpoint.js";
import { loadZoneFile, type ZoneSource } from "../topology/zones.js";
import { formatTopologyReport } from "../verify/format-report.js";
import { verifyTopology } from "../verify/verify-topology.js";
import type { VerifyExpectations } from "../verify/verify-types.js";
import { CheckFailed, nonNegativeInt, positiveInt, UsageError } from "./errors.js";

interface VerifyFlags {
  mode?: "cluster" | "replication";
  seed?: NodeEndpoint[];
  zones?: string;
  passwordEnv?: string;
  expectPrimaries?: number;
  expectReplicasPerPrimary?: number;
  expectReplicas?: number;
  json?: boolean;
}

function seedList(value: string): NodeEndpoint[] {
  try {
    return parseEndpointList(value);
  } catch (err) {
    throw new UsageError(`--seed: ${(err as Error).message}`);
  }
}

function expectations(mode: "cluster" | "replication", f: VerifyFlags): VerifyExpectations {
  const e: VerifyExpectations = {};
  if (mode === "replication") {
    if (f.expectPrimaries !== undefined && f.expectPrimaries !== 1) {
      throw new UsageError(`--expect-primaries ${f.expectPrimaries}: a replication set has exactly one primary`);
    }
    if (f.expectReplicas !== undefined && f.expectReplicasPerPrimary !== undefined && f.expectReplicas !== f.expectReplicasPerPrimary) {
      throw new UsageError("--expect-replicas and --expect-replicas-per-primary disagree (one primary in replication mode)");
    }
  }
  if (f.expectPrimaries !== undefined) e.primaries = f.expectPrimaries;
  if (f.expectReplicasPerPrimary !== undefined) e.replicasPerPrimary = f.expectReplicasPerPrimary;
  if (f.expectReplicas !== undefined) e.replicas = f.expectReplicas;
  return e;
}

function password(envName: string | undefined): string | undefined {
  if (envName === undefined) return undefined;
  const value = process.env[envName];
  if (value === undefined || value === "") throw new UsageError(`--password-env ${envName}: environment variable ${envName} is not set`);
  return value;
}

export async function runVerify(f: VerifyFlags): Promise<void> {
  if (f.mode === undefined) throw new UsageError("verify: --mode cluster|replication is required");
  if (f.seed === undefined) throw new UsageError("verify: --seed HOST:PORT[,HOST:PORT...] is required");
  const expect = expectations(f.mode, f);
  let zones: ZoneSource | undefined;
  if (f.zones !== undefined) {
    try {
      zones = loadZoneFile(f.zones);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const connector = new DirectConnector({ password: password(f.passwordEnv) });
  let report;
  try {
    report = await verifyTopology({ mode: f.mode, seeds: f.seed, connector, zones, expect });
  } catch (err) {
    if (err instanceof ConnectionError) throw new UsageError(err.message);
    throw err;
  } finally {
    await connector.close();
  }
  process.stdout.write(`${f.json ? JSON.stringify(report, null, 2) : formatTopologyReport(report)}\n`);
  if (!report.ok) {
    const codes = [...new Set(report.failures.map((x) => x.code))].join(", ");
    throw new CheckFailed(`topology verification failed: ${codes}`);
  }
}

export function registerVerifyCommand(program: Command): void {
  program
    .command("verify")
    .description("verify a live topology: cluster state and slots, replica links, cross-AZ pairing, expected shape")
    .addOption(new Option("--mode <mode>", "topology mode").choices(["cluster", "replication"]))
    .option("--seed <list>", "HOST:PORT[,HOST:PORT...] to discover from (first that answers)", seedList)
    .option("--zones <file>", 'JSON zone map {"host:port": "zone"}; without it zone checks are skipped')
    .option("--password-env <name>", "name of the environment variable holding the Valkey password")
    .option("--expect-primaries <n>", "expected number of primaries", positiveInt("--expect-primaries"))
    .option("--expect-replicas-per-primary <m>", "expected replicas per primary", nonNegativeInt("--expect-replicas-per-primary"))
    .option("--expect-replicas <n>", "expected replicas (replication mode; cluster mode: in total)", nonNegativeInt("--expect-replicas"))
    .option("--json", "print the report as JSON")
    .action(async (flags: VerifyFlags) => runVerify(flags));
}
