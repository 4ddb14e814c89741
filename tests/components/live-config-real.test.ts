/**
 * Live config changes on a real valkey-server run the way a pod runs it (rendered start.sh and
 * valkey.conf, tests/support/pod-process.ts):
 * a change of only LIVE keys (maxmemory-policy, appendfsync, maxmemory, save, appendonly, repl-diskless-sync-delay,
 * cluster-node-timeout) keeps the members' restart hash (pod/conf-directives.ts `restartFiles`)
 * and is applied by applyLiveConfig with no restart (same process id), CONFIG GET showing the new
 * values; a change of io-threads (restart by choice) or of the scripts changes the hash. The
 * classification itself is checked against the real server in conf-directives.test.ts, the loop's
 * failures on several members in tests/core/live-config.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../harness/local/ports.js";
import { applyLiveConfig } from "../../core/roll/live-config.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { configHash } from "../../components/valkey/config-map.js";
import type { ValkeyConfig } from "../../config/types.js";
import { clusterMemberPod } from "../../pod/cluster-member.js";
import { liveDirectives, restartFiles } from "../../pod/conf-directives.js";
import { VALKEY_CONF_KEY } from "../../pod/member.js";
import { START_SCRIPT_KEY } from "../../pod/paths.js";
import { startPod, type PodProcess } from "../support/pod-process.js";
import { PASSWORD, cli, cliPath, valkeyConfig } from "../support/valkey-fixtures.js";
import { CLUSTER_MEMBER_LIVE_KEYS } from "../support/live-keys.js";

const HOST = "127.0.0.1";
const [PORT, BUS_PORT] = (await freePorts(2)) as [number, number];
const dir = mkdtempSync(join(tmpdir(), "valkey-on-eks-live-"));
const podDir = join(dir, "pod");
const connector = new DirectConnector({ password: PASSWORD });
let pod: PodProcess | undefined;

const A0 = valkeyConfig({
  mode: "cluster",
  ioThreads: 1,
  maxmemoryBytes: 128 * 2 ** 20,
  maxmemoryPolicy: "noeviction",
  cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 2000 },
});
/** Started without the AOF, so B turns it on live. */
const A: ValkeyConfig = { ...A0, persistence: { ...A0.persistence, aof: false } };
/** Only LIVE keys differ from A. */
const B: ValkeyConfig = {
  ...A,
  maxmemoryBytes: 256 * 2 ** 20,
  maxmemoryPolicy: "allkeys-lfu",
  persistence: { ...A.persistence, rdb: false, appendfsync: "always", aof: true },
  replDisklessSyncDelaySeconds: A.replDisklessSyncDelaySeconds + 2,
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

const pid = async (): Promise<string> =>
  /process_id:(\d+)/.exec(await cli(PORT, ["info", "server"], PASSWORD))?.[1] ?? "";
const get = async (name: string): Promise<string> =>
  (await cli(PORT, ["config", "get", name], PASSWORD)).split("\n")[1] ?? "";

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
  it("only LIVE keys changed: the same restart hash, applied without a restart; io-threads or a script change changes the hash", async () => {
    const [a, b] = [member(A).files, member(B).files];
    const hash = (files: Record<string, string>) => configHash(restartFiles(files));
    expect(a[VALKEY_CONF_KEY]).not.toBe(b[VALKEY_CONF_KEY]);
    expect(hash(b)).toBe(hash(a));
    expect(hash(member({ ...B, ioThreads: 2 }).files), "io-threads is rolled").not.toBe(hash(a));
    expect(hash({ ...a, [START_SCRIPT_KEY]: `${a[START_SCRIPT_KEY] ?? ""}\n# changed` })).not.toBe(hash(a));
    const before = await pid();
    const live = liveDirectives(b[VALKEY_CONF_KEY] ?? "");
    expect(Object.keys(live).sort()).toEqual([...CLUSTER_MEMBER_LIVE_KEYS]);
    const r = await applyLiveConfig(
      [{ name: "live-pod", endpoint: { host: HOST, port: PORT } }],
      live,
      connector,
      () => undefined,
    );
    expect(r.members).toEqual(["live-pod"]);
    expect(await pid(), "not restarted").toBe(before);
    expect([
      await get("io-threads"),
      await get("maxmemory"),
      await get("maxmemory-policy"),
      await get("appendonly"),
      await get("appendfsync"),
      await get("save"),
      await get("repl-diskless-sync-delay"),
      await get("cluster-node-timeout"),
    ]).toEqual([
      "1",
      String(256 * 2 ** 20),
      "allkeys-lfu",
      "yes",
      "always",
      "",
      String(B.replDisklessSyncDelaySeconds),
      "3000",
    ]);
  });
});
