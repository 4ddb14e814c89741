/**
 * The partition fault's packet loss: iptables DROP rules on the loopback interface. Every local
 * process listens on its own 127.0.0.x and also SENDS from it (valkey-server and Sentinel
 * `bind-source-addr`, HAProxy `source`), as a pod does from its pod IP, so a rule naming two
 * addresses cuts exactly the traffic between those two processes. Clients (the drill's load, the
 * harness's own probes) connect from 127.0.0.1 and are never named, so they still reach the
 * isolated member; HAProxy is never named either.
 *
 * The rules live in one dedicated chain, `VBENCH-<pid>`, jumped to from INPUT (every loopback
 * packet passes OUTPUT then INPUT; dropping at INPUT drops both directions of a connection once
 * both directions are listed). The chain, its rules and the jump go in in one iptables-restore
 * transaction (without iptables-restore: chain and rules first, the jump last), so the cut starts
 * at once for every peer; healing deletes the jump (one command, every peer at once), then
 * flushes and deletes the chain. The chain is removed on heal, by the target's
 * stop(), and at process exit (signals included: util/process-reaper.ts runAtExit), so no rule
 * outlives the drill; a chain left by a process that no longer runs (SIGKILL cannot be caught) is
 * removed by the next cut.
 *
 * Needs root (CAP_NET_ADMIN) and a working iptables (Debian's iptables 1.8 on the nf_tables
 * backend here; `.ci/setup` installs it). Without them the drill is skipped with the reason,
 * never passed (run-drill.ts).
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { which } from "../../benchmarks/run/binaries.js";
import { runAtExit } from "../../core/util/process-reaper.js";

const CHAIN_PREFIX = "VBENCH-";
/** `-w`: wait up to 5 s for the xtables lock instead of failing when another iptables runs. */
const WAIT = ["-w", "5"];
const run = promisify(execFile);

export type PartitionCapability = { ok: true; iptables: string } | { ok: false; reason: string };

export interface CapabilityProbe {
  /** @default process.getuid() */
  uid?: number;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
}

/**
 * Whether this process can cut traffic: root, an iptables binary (`$IPTABLES`, else `iptables` on
 * PATH) and one that works (`iptables -S INPUT` answers). The reason names what is missing.
 */
export function partitionCapability(probe: CapabilityProbe = {}): PartitionCapability {
  const uid = probe.uid ?? process.getuid?.() ?? -1;
  const env = probe.env ?? process.env;
  if (uid !== 0) return { ok: false, reason: `not root (uid ${uid}): iptables rules need root (CAP_NET_ADMIN)` };
  const named = env.IPTABLES;
  const iptables = named ?? which("iptables", env.PATH ?? "");
  if (iptables === undefined)
    return {
      ok: false,
      reason: "iptables not found on PATH (.ci/setup installs Debian's iptables; IPTABLES names another binary)",
    };
  if (!existsSync(iptables))
    return { ok: false, reason: `iptables not found: IPTABLES names ${iptables}, which does not exist` };
  try {
    execFileSync(iptables, [...WAIT, "-S", "INPUT"], { stdio: ["ignore", "pipe", "pipe"], timeout: 10_000 });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    const why = (e.stderr?.toString().trim() || e.message).split("\n")[0];
    return { ok: false, reason: `iptables is not usable here (${iptables} -S INPUT failed: ${why})` };
  }
  return { ok: true, iptables };
}

/** The chain of this process's partition. */
export const chainName = (pid: number = process.pid): string => `${CHAIN_PREFIX}${pid}`;

/** A process on one side of the cut: its address and the TCP ports it listens on (client, cluster bus). */
export interface PartitionEnd {
  host: string;
  ports: readonly number[];
}

const portList = (e: PartitionEnd): string => {
  if (e.ports.length === 0 || e.ports.length > 15)
    throw new Error(`partition: ${e.host} needs 1 to 15 listening ports (got ${e.ports.length})`);
  return e.ports.join(",");
};

/**
 * iptables argument lists that cut `isolated` off from each peer (pure): connections to either
 * side's listening ports, both directions (requests and replies), between the two addresses.
 */
export function dropRules(chain: string, isolated: PartitionEnd, peers: readonly PartitionEnd[]): string[][] {
  if (peers.length === 0) throw new Error(`partition: no peer to cut ${isolated.host} off from`);
  const i = isolated.host;
  const iPorts = portList(isolated);
  const drop = (src: string, dst: string, dir: "--dports" | "--sports", ports: string): string[] => [
    "-A",
    chain,
    "-s",
    src,
    "-d",
    dst,
    "-p",
    "tcp",
    "-m",
    "multiport",
    dir,
    ports,
    "-j",
    "DROP",
  ];
  return peers.flatMap((p) => {
    const pPorts = portList(p);
    return [
      drop(p.host, i, "--dports", iPorts),
      drop(i, p.host, "--sports", iPorts),
      drop(i, p.host, "--dports", pPorts),
      drop(p.host, i, "--sports", pPorts),
    ];
  });
}

/**
 * iptables argument lists that drop every packet to `hosts` (pure): addresses nothing answers at, as a deleted pod's
 * IP on EKS answers nothing (a connect to it hangs instead of being refused).
 */
export function blackholeRules(chain: string, hosts: readonly string[]): string[][] {
  if (hosts.length === 0) throw new Error("blackhole: no address to drop");
  return hosts.map((h) => ["-A", chain, "-d", h, "-j", "DROP"]);
}

/** Deletes the jump, flushes and deletes the chain; each step may fail when already done. */
export const teardownCommands = (chain: string): string[][] => [
  ["-D", "INPUT", "-j", chain],
  ["-F", chain],
  ["-X", chain],
];

function runSync(iptables: string, args: readonly string[]): boolean {
  try {
    execFileSync(iptables, [...WAIT, ...args], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

const chainsIn = (rules: string): string[] =>
  rules
    .split("\n")
    .map((l) => new RegExp(`^-N (${CHAIN_PREFIX}\\d+)$`).exec(l.trim())?.[1])
    .filter((c): c is string => c !== undefined);

/** `VBENCH-<pid>` chains in the filter table (from `iptables -S`). */
export function vbenchChains(iptables: string): string[] {
  return chainsIn(execFileSync(iptables, [...WAIT, "-S"], { encoding: "utf8", timeout: 10_000 }));
}

/** Removes chains whose process no longer runs (left by a SIGKILLed run). */
async function removeOrphans(iptables: string): Promise<void> {
  const { stdout } = await run(iptables, [...WAIT, "-S"]);
  for (const chain of chainsIn(stdout)) {
    const pid = Number(chain.slice(CHAIN_PREFIX.length));
    if (pid === process.pid || existsSync(`/proc/${pid}`)) continue;
    for (const args of teardownCommands(chain)) await run(iptables, [...WAIT, ...args]).catch(() => undefined);
  }
}

/** iptables-restore input (`--noflush`): a new chain with `rules`, then the jump to it from INPUT (pure). */
export function restoreInput(chain: string, rules: readonly string[][]): string {
  return [
    "*filter",
    `:${chain} - [0:0]`,
    ...rules.map((r) => r.join(" ")),
    `-I INPUT 1 -j ${chain}`,
    "COMMIT",
    "",
  ].join("\n");
}

/** Runs `command args` with `input` on stdin; rejects with its stderr when it fails. */
function feed(command: string, args: readonly string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr.trim()}`)),
    );
    child.stdin.end(input);
  });
}

export class Partition {
  private healed = false;
  private readonly unregister: () => void;

  private constructor(
    readonly iptables: string,
    readonly chain: string,
    readonly rules: readonly string[][],
    /** The process cut off (none for a blackhole). */
    readonly isolated: PartitionEnd | undefined,
    private readonly summary: string,
  ) {
    this.unregister = runAtExit(() => this.heal());
  }

  /**
   * Cuts `isolated` off from every peer (addresses, both directions) until heal(). Async
   * (the drill's load keeps running meanwhile); the cut takes effect with the last command.
   */
  static async cut(iptables: string, isolated: PartitionEnd, peers: readonly PartitionEnd[]): Promise<Partition> {
    const chain = chainName();
    const rules = dropRules(chain, isolated, peers);
    const end = (e: PartitionEnd): string => `${e.host}:${e.ports.join("+")}`;
    const summary = `${end(isolated)} cut off from ${peers.map(end).join(", ")} (${rules.length} DROP rules in iptables chain ${chain})`;
    return Partition.install(iptables, chain, rules, isolated, summary);
  }

  /**
   * Drops every packet to `hosts` until heal() (the process's one chain: not beside a cut). Async; the drop takes
   * effect with the last command.
   */
  static async blackhole(iptables: string, hosts: readonly string[]): Promise<Partition> {
    const chain = chainName();
    const rules = blackholeRules(chain, hosts);
    const summary = `${hosts.length} addresses blackholed (${rules.length} DROP rules in iptables chain ${chain})`;
    return Partition.install(iptables, chain, rules, undefined, summary);
  }

  private static async install(
    iptables: string,
    chain: string,
    rules: readonly string[][],
    isolated: PartitionEnd | undefined,
    summary: string,
  ): Promise<Partition> {
    await removeOrphans(iptables);
    for (const args of teardownCommands(chain)) await run(iptables, [...WAIT, ...args]).catch(() => undefined);
    const p = new Partition(iptables, chain, rules, isolated, summary);
    try {
      const restore = `${iptables}-restore`;
      if (existsSync(restore)) {
        // One transaction: the chain, its rules and the jump from INPUT appear at once.
        await feed(restore, [...WAIT, "--noflush"], restoreInput(chain, rules));
      } else {
        await run(iptables, [...WAIT, "-N", chain]);
        for (const args of rules) await run(iptables, [...WAIT, ...args]);
        await run(iptables, [...WAIT, "-I", "INPUT", "1", "-j", chain]);
      }
    } catch (err) {
      p.heal();
      throw new Error(`partition: iptables failed: ${(err as Error).message}`, { cause: err });
    }
    return p;
  }

  /** "127.0.0.20:6379 cut off from 127.0.0.21:6380, 127.0.0.70:26379 (8 DROP rules in iptables chain VBENCH-123)" */
  describe(): string {
    return this.summary;
  }

  /** Removes every rule without blocking the event loop (the drill's load runs meanwhile); idempotent. */
  async lift(): Promise<void> {
    if (this.healed) return;
    const done = [];
    for (const args of teardownCommands(this.chain))
      done.push(
        await run(this.iptables, [...WAIT, ...args]).then(
          () => true,
          () => false,
        ),
      );
    if (done[2] === true) this.markHealed();
    else this.heal();
  }

  /**
   * Removes every rule (synchronous: also runs at exit and in a target's stop()); idempotent. Returns whether the chain
   * is gone.
   */
  heal(): boolean {
    if (this.healed) return true;
    const done = teardownCommands(this.chain).map((args) => runSync(this.iptables, args));
    if (done[2] === true || !vbenchChainsSafe(this.iptables).includes(this.chain)) this.markHealed();
    return this.healed;
  }

  private markHealed(): void {
    this.healed = true;
    this.unregister();
  }

  get active(): boolean {
    return !this.healed;
  }
}

function vbenchChainsSafe(iptables: string): string[] {
  try {
    return vbenchChains(iptables);
  } catch {
    return [];
  }
}
