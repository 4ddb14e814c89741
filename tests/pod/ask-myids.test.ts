/**
 * heal.sh's identity asks (pod/scripts/lib-ask-myids.sh) against real valkey-server processes: every peer asked for
 * CLUSTER MYID in one valkey-cli process, each answer credited to its own ask (myid-answers.awk), and a peer that
 * hangs (its server SIGSTOPped: the connection is accepted, nothing answers) costs the call its bound, leaves the
 * asks after it for the next call, and is asked after the others from then on: the next call proves the rest. A call
 * may be given a longer bound than cli_timeout (heal.sh's last proofs: a busy host answers fewer asks in it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import { shellFile } from "../../pod/shell-file.js";
import { shQuote } from "../../pod/sh-cli.js";
import { PASSWORD, callNode, cliPath, run } from "../support/valkey-fixtures.js";

const root = mkdtempSync(join(tmpdir(), "valkey-on-eks-ask-myids-"));
const fleet = new LocalFleet(join(root, "fleet"));
/** The member whose script asks ([0]) and its three peers. */
let servers: ValkeyProcess[] = [];
let ids: string[] = [];

beforeAll(async () => {
  servers = await Promise.all(
    [0, 1, 2, 3].map((i) => fleet.start({ name: `m${i}`, clusterEnabled: true, password: PASSWORD })),
  );
  ids = await Promise.all(servers.map((s) => callNode(s.host, s.port, "CLUSTER", "MYID")));
}, 60_000);
afterAll(async () => {
  for (const s of servers) s.signal("SIGCONT");
  await fleet.stopAll();
  rmSync(root, { recursive: true, force: true });
});

/** lib-cli.sh and lib-ask-myids.sh as heal.sh includes them, then `calls` ask_myids calls over `asks` (bound: $2). */
function script(asks: string, calls: number, bound?: number): string {
  const body = (name: string): string => shellFile(name).replace(/^#!.*\n/, "");
  const me = servers[0] as ValkeyProcess;
  return [
    `port=${me.port}`,
    `local_host=${me.host}`,
    "cli_timeout=2",
    "server_pid=",
    'log() { echo "heal: $*" >&2; }',
    "nl='\n'",
    "proven=",
    `answers_awk=${shQuote(shellFile("myid-answers.awk"))}`,
    body("lib-cli.sh"),
    body("lib-deadline.sh").replace(/^started=.*$/m, "started=$(date +%s); deadline=600"),
    body("lib-ask-myids.sh"),
    ...Array.from({ length: calls }, (_, i) => [
      `ask_myids ${shQuote(asks)}${bound === undefined ? "" : ` ${bound}`}`,
      `printf 'call ${i + 1}: slow=%s\\n%s' "$slow" "$proven"`,
    ]).flat(),
  ].join("\n");
}

async function runScript(text: string): Promise<{ out: string; err: string; ms: number }> {
  const t0 = Date.now();
  const { stdout, stderr } = await run("sh", ["-c", text], {
    env: { ...process.env, VALKEY_CLI: cliPath(), REDISCLI_AUTH: PASSWORD, VALKEYCLI_AUTH: PASSWORD },
  });
  return { out: stdout, err: stderr, ms: Date.now() - t0 };
}

const ask = (i: number, id = ids[i] as string): string =>
  `${id} ${(servers[i] as ValkeyProcess).host} ${(servers[i] as ValkeyProcess).port} m${i}\n`;
const proof = (i: number): string =>
  `${ids[i]} ${(servers[i] as ValkeyProcess).host} ${(servers[i] as ValkeyProcess).port}`;

describe("lib-ask-myids.sh: CLUSTER MYID of many peers in one client process (real valkey-server)", () => {
  it("proves each peer that answers with its own ID at that address; another ID or a refused address proves none", async () => {
    const refused = `${"f".repeat(40)} ${(servers[1] as ValkeyProcess).host} 1 m9\n`;
    // Peer 3 asked as if it were peer 2: the answer is peer 3's ID, not the one asked for.
    const { out, err } = await runScript(script(ask(1) + refused + ask(3, ids[2]) + ask(3), 1));
    const proven = out.split("\n").slice(1).filter(Boolean);
    expect(proven).toEqual([proof(1), proof(3)]);
    expect(out).toMatch(/^call 1: slow=\n/);
    expect(err).toContain(
      `m3 at ${(servers[3] as ValkeyProcess).host}:${(servers[3] as ValkeyProcess).port} is node '${ids[3]}', not ${ids[2]}`,
    );
  }, 30_000);

  it("a peer that hangs costs one bound, the asks after it wait one call, and it is asked last from then on", async () => {
    const hung = servers[1] as ValkeyProcess;
    hung.signal("SIGSTOP");
    try {
      const { out, ms } = await runScript(script(ask(1) + ask(2) + ask(3), 2));
      const [first, second] = out.split(/^call \d: /m).filter(Boolean) as [string, string];
      // Call 1: cut at its bound on peer 1, nothing after it asked; peer 1 is now slow.
      expect(first.split("\n").filter(Boolean)).toEqual([`slow= ${ids[1]}`]);
      // Call 2: peers 2 and 3 first, proven; peer 1 last, hangs again.
      expect(second.split("\n").filter(Boolean)).toEqual([`slow= ${ids[1]}`, proof(2), proof(3)]);
      expect(ms, "two calls, each cut at its 2 s bound").toBeGreaterThanOrEqual(4000);
    } finally {
      hung.signal("SIGCONT");
    }
  }, 60_000);

  it("a call given a longer bound than cli_timeout proves all 30 asks before a hung peer in one call", async () => {
    const hung = servers[1] as ValkeyProcess;
    hung.signal("SIGSTOP");
    try {
      // 30 asks of peers 2 and 3, then the hung peer, under 5 s (heal.sh's last proofs: cli_timeout + 31 / 10).
      const asks = Array.from({ length: 15 }, () => ask(2) + ask(3)).join("") + ask(1);
      const { out, ms } = await runScript(script(asks, 1, 5));
      const lines = out.split("\n").filter(Boolean);
      expect(lines[0]).toBe(`call 1: slow= ${ids[1]}`);
      expect(lines.slice(1), "every ask before the hung peer answered").toHaveLength(30);
      expect(ms, "cut at its 5 s bound, not at cli_timeout's 2 s").toBeGreaterThanOrEqual(5000);
    } finally {
      hung.signal("SIGCONT");
    }
  }, 60_000);
});
