/**
 * A full restart on new addresses where one primary comes back after the others have flagged it `fail`, its first
 * contact with them later than its 2 s writable delay (the CI's cluster `all` row of 2026-12-03, which lost 2
 * acknowledged writes; docs/measurements.md). Real valkey-server processes run as pods run them (rendered start,
 * heal and failback scripts). Unheld, the late primary's replica syncs from it and is elected over it while the
 * others still flag it (Valkey keeps a primary with slots flagged for 2 × cluster-node-timeout after it is reachable
 * again): the writes the primary acknowledged between that election and its demotion were lost (4 and 6 in the
 * reproduction). With the hold (start.sh holdFailover, released by heal.sh) the replica takes over by hand, the
 * primary's writes paused until it has them all: nothing acknowledged is lost.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { ClusterTarget } from "../../harness/drill/cluster-target.js";
import { pollUntil, sleep } from "../../core/util/poll-until.js";

const NODE_TIMEOUT_MS = 5000;
/** Back this long after the others: past their failure detection, inside the 2 × node timeout the mark lasts. */
const LATE_MS = 9000;
/** Its first contact with the others this long after its start (the 2 s writable delay has passed). */
const STALE_MS = 1500;
const WRITE_FOR_MS = 15_000;

describe("a primary back late from a full restart (real processes, rendered pod scripts)", () => {
  let t: ClusterTarget | undefined;
  afterAll(async () => t?.stop());

  it("loses no acknowledged write (its replica is not elected over it; where it takes over, by hand with the primary's writes paused)", async () => {
    const password = randomBytes(8).toString("hex");
    t = await ClusterTarget.start({
      primaries: 3,
      replicasPerPrimary: 1,
      zones: ["zone-a", "zone-b", "zone-c"],
      password,
      hostBase: 70,
      failureDetectionMs: NODE_TIMEOUT_MS,
      failoverTimeoutMs: 2 * NODE_TIMEOUT_MS,
      restartDelayMs: 500,
      zoneDownMs: 500,
    });
    const shard = (await t.loadShards())[0]!;
    const primary = t.memberName(shard.nodeIds[0]!)!;
    const replica = t.memberName(shard.nodeIds[1]!)!;
    const late = await t.restartWithLateMember(primary, LATE_MS, STALE_MS);
    // A client of that shard reaching the late primary at its new address from its start, no WAIT.
    const c = new Redis({
      host: late.host,
      port: late.port,
      password,
      commandTimeout: 500,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    c.on("error", () => undefined);
    const acked: string[] = [];
    const end = Date.now() + WRITE_FOR_MS;
    for (let i = 0; Date.now() < end; i++) {
      const k = `{${shard.tag}}:late:${i}`;
      if ((await c.set(k, String(i)).catch(() => null)) === "OK") acked.push(k);
      await sleep(10);
    }
    c.disconnect();
    await late.namesCurrent;
    const took = /heal: my primary \S+ \(\S+\) is flagged fail but my link to it is up: taking over.*/;
    const log = t.memberLog(replica);
    await pollUntil(() => Promise.resolve((t as ClusterTarget).verify().then((r) => r.ok || "not healed")), {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: "the verifier to pass after the late primary's return",
    });
    const back = await t.readBack(acked);
    const lost = acked.filter((k) => back.get(k) !== k.split(":").pop());
    const took1 = took.exec(log)?.[0];
    console.log(
      `[late primary] ${primary} (replica ${replica}): ${acked.length} acknowledged, ${lost.length} lost; ${took1 ?? "no takeover"}`,
    );
    expect(acked.length, "the late primary acknowledged writes").toBeGreaterThan(100);
    expect(
      lost,
      `acknowledged writes lost; ${replica}'s heal lines:\n${log
        .split("\n")
        .filter((l) => l.startsWith("heal:"))
        .join("\n")}`,
    ).toEqual([]);
  }, 180_000);
});
