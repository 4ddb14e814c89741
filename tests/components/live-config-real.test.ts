/**
 * Live config changes on a real valkey-server run the way a pod runs it (rendered start.sh and
 * valkey.conf, tests/support/pod-process.ts):
 * - the classification (pod/live-config.ts) against the real server: every live directive takes
 *   CONFIG SET, every immutable one we render refuses it;
 * - a change of only live keys (io-threads, maxmemory-policy, appendfsync, maxmemory, save,
 *   appendonly, cluster-node-timeout) keeps the members' restart hash and is applied by
 *   applyLiveConfig with no restart (same process id), CONFIG GET showing the new values; a
 *   change of the scripts changes the hash;
 * - a value the server refuses fails naming the member and the directive.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../benchmarks/local/ports.js";
import { applyLiveConfig } from "../../benchmarks/roll/live-config.js";
import { DirectConnector } from "../../benchmarks/topology/connector.js";
import { configHash } from "../../components/valkey/config-map.js";
import type { ValkeyConfig } from "../../config/types.js";
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { LIVE_DIRECTIVES, liveDirectives, restartRelevant } from "../../pod/live-config.js";
import { VALKEY_CONF_KEY } from "../../pod/member.js";
import { START_SCRIPT_KEY } from "../../pod/paths.js";
import { startPod, type PodProcess } from "../support/pod-process.js";
import { PASSWORD, cli, cliPath, valkeyConfig } from "../support/valkey-fixtures.js";

const HOST = "127.0.0.1";
const [PORT, BUS_PORT] = (await freePorts(2)) as [number, number];
const dir = mkdtempSync(join(tmpdir(), "valkey-on-eks-live-"));
const podDir = join(dir, "pod");
const connector = new DirectConnector({ password: PASSWORD });
let pod: PodProcess | undefined;

const A = valkeyConfig({
  mode: "cluster",
  ioThreads: 1,
  maxmemoryBytes: 128 * 2 ** 20,
  maxmemoryPolicy: "noeviction",
  cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 2000 },
});
/** Only live keys differ from A. */
const B: ValkeyConfig = {
  ...A,
  ioThreads: 2,
  maxmemoryBytes: 256 * 2 ** 20,
  maxmemoryPolicy: "allkeys-lfu",
  persistence: { ...A.persistence, rdb: false, appendfsync: "always", aof: true },
  cluster: { ...A.cluster, nodeTimeoutMs: 3000 },
};

function member(valkey: ValkeyConfig) {
  return clusterMemberPod({
    valkey,
    auth: true,
    configDir: podDir,
    runDir: join(podDir, "run"),
    dataDir: join(dir, "data"),
    passwordFile: join(dir, "password"),
    port: PORT,
    busPort: BUS_PORT,
    localHost: HOST,
    bind: HOST,
    background: [],
  });
}

const pid = async (): Promise<string> => /process_id:(\d+)/.exec(await cli(PORT, ["info", "server"], PASSWORD))?.[1] ?? "";
const get = async (name: string): Promise<string> => (await cli(PORT, ["config", "get", name], PASSWORD)).split("\n")[1] ?? "";

beforeAll(async () => {
  writeFileSync(join(dir, "password"), PASSWORD, { mode: 0o600 });
  pod = await startPod("live-pod", podDir, HOST, PORT, member(A), {
    VALKEY_CLI: cliPath(),
    REDISCLI_AUTH: PASSWORD,
    VALKEYCLI_AUTH: PASSWORD,
    POD_NAME: "live-pod",
    VALKEY_ANNOUNCE_HOST: HOST,
    VALKEY_ANNOUNCE_IP: HOST,
    VALKEY_AVAILABILITY_ZONE: "zone-a",
  });
}, 60_000);
afterAll(async () => {
  await pod?.stop(3000);
  await connector.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("live config on a real member (rendered pod files)", () => {
  it("the classification holds on the real server: every live directive takes CONFIG SET, every immutable one we render refuses it", async () => {
    for (const name of LIVE_DIRECTIVES) {
      const value = await get(name);
      expect(await cli(PORT, ["config", "set", name, value], PASSWORD), `CONFIG SET ${name} "${value}"`).toBe("OK");
    }
    for (const name of ["cluster-enabled", "cluster-config-file", "cluster-port", "daemonize", "logfile"]) {
      const value = await get(name);
      expect(await cli(PORT, ["config", "set", name, value], PASSWORD), name).toMatch(/ERR .*(immutable|protected|can't set)/i);
    }
  });

  it("only live keys changed: the same restart hash, applied without a restart; a script change changes the hash", async () => {
    const [a, b] = [member(A).files, member(B).files];
    expect(a[VALKEY_CONF_KEY]).not.toBe(b[VALKEY_CONF_KEY]);
    expect(configHash(restartRelevant(b))).toBe(configHash(restartRelevant(a)));
    expect(configHash(restartRelevant({ ...a, [START_SCRIPT_KEY]: `${a[START_SCRIPT_KEY] ?? ""}\n# changed` }))).not.toBe(configHash(restartRelevant(a)));
    const before = await pid();
    const live = liveDirectives(b[VALKEY_CONF_KEY] ?? "");
    expect(live.map((d) => d.name)).toEqual(["io-threads", "maxmemory", "maxmemory-policy", "appendonly", "appendfsync", "save", "cluster-node-timeout"]);
    const r = await applyLiveConfig([{ host: HOST, port: PORT }], live, connector);
    expect(r.members).toEqual([`${HOST}:${PORT}`]);
    expect(await pid(), "not restarted").toBe(before);
    expect([
      await get("io-threads"),
      await get("maxmemory"),
      await get("maxmemory-policy"),
      await get("appendfsync"),
      await get("save"),
      await get("cluster-node-timeout"),
    ]).toEqual(["2", String(256 * 2 ** 20), "allkeys-lfu", "always", "", "3000"]);
  });

  it("a value the server refuses fails naming the member and the directive", async () => {
    await expect(applyLiveConfig([{ host: HOST, port: PORT }], [{ name: "maxmemory-policy", value: "sometimes" }], connector)).rejects.toThrow(
      new RegExp(`live config: CONFIG SET maxmemory-policy "sometimes" on ${HOST}:${PORT} was refused: .*`),
    );
  });
});
