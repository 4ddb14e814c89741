/**
 * A replica's start decision waits while its primary's address drops connections (real processes,
 * iptables). After a restart, a pod's DNS record keeps its old address for the record's TTL; a
 * replica whose first connect goes there hangs until repl-timeout (60 s: measured on real pods, a
 * full replication restart back at +63.7 s instead of +13 s). The rendered start script
 * (pod/scripts/replication-start.sh, `await_address`) probes the primary before writing
 * `replicaof` and does not start while the probe's connect hangs.
 *
 * Here: 1 primary + 1 replica through the rendered start script, 1 Sentinel (down-after 30 s, so
 * nothing fails over). The replica is killed; a rule drops every new SYN to the primary's port (the
 * Sentinel's links are already open); the replica is restarted. Until the rule has dropped 4 SYNs
 * (a probe's 3 s timeout has passed) the replica must not listen; once the rule goes, it starts,
 * links, and its start log names the wait. Loopback cannot show the 60 s itself (the same address
 * comes back, so the kernel's SYN retransmits get through): what is checked is that the decision
 * waits for the address.
 */
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { partitionCapability } from "../../harness/drill/partition.js";
import { waitForReplicaLinks } from "../../harness/local/local-replication.js";
import { killHard, SentinelTopology } from "../../harness/local/sentinel-topology.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { rootSkipReason, titled } from "../support/root.js";
import { connects } from "../support/tcp-probe.js";

const NOT_ROOT = rootSkipReason("iptables rules on loopback");
const PASSWORD = "replica-primary-address-password";
const COMMENT = `vbench-addr-${process.pid}`;

let t: SentinelTopology | undefined;
let removeRule: (() => void) | undefined;
afterEach(async () => {
  removeRule?.();
  removeRule = undefined;
  await t?.stopAll();
  t = undefined;
});

/** Drops new TCP connections to host:port; returns how many SYNs it dropped so far, and its removal. */
function dropSyns(iptables: string, host: string, port: number): { dropped: () => number; remove: () => void } {
  const rule = ["INPUT", "-p", "tcp", "--syn", "-d", host, "--dport", String(port)];
  const tail = ["-m", "comment", "--comment", COMMENT, "-j", "DROP"];
  execFileSync(iptables, ["-w", "5", "-I", ...rule, ...tail]);
  let removed = false;
  return {
    dropped: () => {
      const out = execFileSync(iptables, ["-w", "5", "-L", "INPUT", "-v", "-x", "-n"]).toString();
      const line = out.split("\n").find((l) => l.includes(COMMENT));
      if (line === undefined) throw new Error(`the rule ${COMMENT} is gone from INPUT`);
      return Number(line.trim().split(/\s+/)[0]);
    },
    remove: () => {
      if (removed) return;
      removed = true;
      execFileSync(iptables, ["-w", "5", "-D", ...rule, ...tail]);
    },
  };
}

describe.skipIf(NOT_ROOT !== "")(
  titled("a replica's start waits for its primary's address (real processes, iptables)", NOT_ROOT),
  () => {
    it("does not start while connects to the primary hang; starts and links once they go through, and says why it waited", async () => {
      const cap = partitionCapability();
      if (!cap.ok) throw new Error(`this test needs root and a working iptables: ${cap.reason}`);
      t = await SentinelTopology.start({
        replicas: 1,
        zones: ["a"],
        sentinels: 1,
        quorum: 1,
        downAfterMs: 30_000,
        failoverTimeoutMs: 60_000,
        proxy: false,
        password: PASSWORD,
        hostBase: 190,
      });
      const [primary, replica] = t.members;
      if (primary === undefined || replica === undefined) throw new Error("the topology has no replica");
      expect(await t.primaryFromSentinels()).toBe(primary.address);
      await killHard(replica.proc);

      const drop = dropSyns(cap.iptables, primary.host, primary.port);
      removeRule = drop.remove;
      const starting = t.startMember(replica.ordinal);
      starting.catch(() => undefined);
      await pollUntil(async () => ((await Promise.resolve(drop.dropped())) >= 4 ? true : `${drop.dropped()} dropped`), {
        timeoutMs: 30_000,
        intervalMs: 200,
        what: "4 SYNs to the primary dropped (a probe's connect timed out)",
      });
      expect(await connects("127.0.0.1", replica.host, replica.port)).toBe(false);

      drop.remove();
      const restarted = await starting;
      await waitForReplicaLinks([replica], PASSWORD, 30_000);
      expect(restarted.proc?.stderr()).toMatch(
        new RegExp(`the primary's address ${primary.host}:${primary.port} drops connections`),
      );
      expect(restarted.proc?.stderr()).toMatch(/starting as its replica/);
    });
  },
);
