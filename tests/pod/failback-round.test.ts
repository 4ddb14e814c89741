/**
 * One AZ failback round (pod/scripts/cluster-failback.sh): its questions to the local server asked in one real
 * valkey-cli process, the replies split by failback-round.awk and decided by failback-decision.awk, as the script runs
 * them. Real servers give the replies: a one-member cluster owning every slot (cluster_state:ok), one owning none
 * (cluster_state:fail), a refused port; then the real reply cut short at each point a killed call could stop, and the
 * shards section alone, so a round decides only on a whole, settled set of replies.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { failbackRoundAwk } from "../../pod/az-failback-script.js";
import { shellFile } from "../../pod/shell-file.js";
import { PASSWORD, callNode, cliPath, freePort, run } from "../support/valkey-fixtures.js";

const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-failback-round-"));
const fleet = new LocalFleet(join(root, "fleet"));
/** [0] owns every slot in zone us-west-2a; [1] owns none and has no zone. */
let servers: ValkeyProcess[] = [];
let ids: string[] = [];

/** The round's questions, as the script holds them (its `questions='…'` value). */
function questions(): string {
  const m = /^questions='([^']*)'$/m.exec(shellFile("cluster-failback.sh"));
  if (m === null) throw new Error("cluster-failback.sh holds no questions='…' value");
  return m[1] as string;
}

/** The questions asked of host:port in one valkey-cli process, as local_cli_batch asks them: its stdout. */
async function ask(host: string, port: number): Promise<string> {
  const cmd = `printf '%s\\n' "$Q" | timeout 5 "$VALKEY_CLI" -h ${host} -p ${port} 2>/dev/null; true`;
  const { stdout } = await run("sh", ["-c", cmd], {
    env: { ...process.env, Q: questions(), VALKEY_CLI: cliPath(), REDISCLI_AUTH: PASSWORD, VALKEYCLI_AUTH: PASSWORD },
  });
  return stdout;
}

/** The round awk's three lines over `replies`. */
async function decide(replies: string): Promise<string[]> {
  const child = run("awk", ["-v", "maxlag=1048576", failbackRoundAwk()]);
  child.child.stdin?.end(replies);
  return (await child).stdout.trimEnd().split("\n");
}

beforeAll(async () => {
  servers = await Promise.all(
    [0, 1].map((i) => fleet.start({ name: `m${i}`, clusterEnabled: true, password: PASSWORD })),
  );
  ids = await Promise.all(servers.map((s) => callNode(s.host, s.port, "CLUSTER", "MYID")));
  const [owner] = servers as [ValkeyProcess];
  await callNode(owner.host, owner.port, "CONFIG", "SET", "availability-zone", "us-west-2a");
  await callNode(owner.host, owner.port, "CLUSTER", "ADDSLOTSRANGE", "0", "16383");
  await waitFor(async () => (await callNode(owner.host, owner.port, "CLUSTER", "INFO")).includes("cluster_state:ok"));
}, 60_000);
afterAll(async () => {
  await fleet.stopAll();
  rmSync(root, { recursive: true, force: true });
});

async function waitFor(ok: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the one-member cluster never read cluster_state:ok");
}

describe("an AZ failback round: one client call, its replies split and decided", () => {
  it("a settled member: its zone and ID, and the decision over the whole shards reply", async () => {
    const s = servers[0] as ValkeyProcess;
    // One primary in one zone: a majority no replica can fix (failback-decision.awk's own wait).
    expect(await decide(await ask(s.host, s.port))).toEqual([
      "zone us-west-2a",
      `me ${ids[0]}`,
      "wait no zone holds a primary majority that a synced replica can fix",
    ]);
  });

  it("cluster_state:fail decides nothing; a member without a zone reads as none", async () => {
    const s = servers[1] as ValkeyProcess;
    expect(await decide(await ask(s.host, s.port))).toEqual(["zone ", `me ${ids[1]}`, "unsettled"]);
  });

  it("a refused call decides nothing", async () => {
    const host = (servers[0] as ValkeyProcess).host;
    expect(await decide(await ask(host, await freePort(host)))).toEqual(["zone ", "me ", "unsettled"]);
  });

  it("a call cut at any line (a killed client keeps what it printed) decides nothing; whole, it decides", async () => {
    const s = servers[0] as ValkeyProcess;
    const lines = (await ask(s.host, s.port)).split("\n");
    const end = lines.lastIndexOf("failback-end");
    expect(end).toBeGreaterThan(10);
    const verdicts = new Set<string>();
    for (let keep = 0; keep < end; keep++) {
      const out = await decide(lines.slice(0, keep).join("\n") + "\n");
      verdicts.add(out[2] as string);
    }
    expect([...verdicts]).toEqual(["unsettled"]);
    expect((await decide(lines.slice(0, end + 1).join("\n") + "\n"))[2]).toMatch(/^wait /);
  });

  it("the shards reply without the other answers (no state, no ID) decides nothing", async () => {
    const s = servers[0] as ValkeyProcess;
    const out = await ask(s.host, s.port);
    const shardsOnly = out.slice(out.indexOf("failback-shards\n"));
    expect(shardsOnly.startsWith("failback-shards\n")).toBe(true);
    expect(await decide(shardsOnly)).toEqual(["zone ", "me ", "unsettled"]);
  });
});
