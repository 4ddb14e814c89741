/**
 * availability-zone on Kubernetes < 1.35 (no zone label on the pod), on a real valkey-server run
 * the way a pod runs it (rendered start.sh + failback.sh, no VALKEY_AVAILABILITY_ZONE): the
 * bootstrap's announceZones sets the zone with CONFIG SET, the member's failback loop keeps it in
 * the zone file on its data volume, and a restart through the same entrypoint announces it again
 * with no bootstrap involved. A zone label (Kubernetes >= 1.35) wins over the file, and the loop
 * keeps the new value.
 */
import { clusterMemberPod } from "../../pod/cluster-member.js";
import type { PodDefinition } from "../../pod/definition.js";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePorts } from "../../harness/local/ports.js";
import { DirectConnector } from "../../core/topology/connector.js";
import { announceZones } from "../../core/bootstrap/announce-zones.js";
import { zoneFileOf } from "../../pod/start-script.js";
import { startPod, type PodProcess } from "../support/pod-process.js";
import { eventually } from "../support/processes.js";
import { PASSWORD, cli, cliPath, valkeyConfig } from "../support/valkey-fixtures.js";

const HOST = "127.0.0.1";
// Free ports at load time (a fixed port, or port + 10000 for the bus, can be taken on a busy machine).
const [PORT, BUS_PORT] = (await freePorts(2)) as [number, number];
const dir = mkdtempSync(join(tmpdir(), "valkey-on-eks-zone-"));
const dataDir = join(dir, "data");
const podDir = join(dir, "pod");
const zoneFile = zoneFileOf(dataDir);
const cliEnv = { VALKEY_CLI: cliPath(), REDISCLI_AUTH: PASSWORD, VALKEYCLI_AUTH: PASSWORD };
let pod: PodProcess | undefined;

function member(): PodDefinition {
  const valkey = valkeyConfig({
    mode: "cluster",
    ioThreads: 1,
    maxmemoryBytes: 128 * 2 ** 20,
    cluster: { primaries: 3, replicasPerPrimary: 1, nodeTimeoutMs: 2000 },
  });
  writeFileSync(join(dir, "password"), PASSWORD, { mode: 0o600 });
  return clusterMemberPod({
    valkey,
    auth: true,
    configDir: podDir,
    runDir: join(podDir, "run"),
    dataDir,
    passwordFile: join(dir, "password"),
    port: PORT,
    busPort: BUS_PORT,
    localHost: HOST,
    bind: HOST,
    background: ["failback"],
    failback: { intervalSeconds: 1 },
  });
}

const start = (zoneLabel?: string): Promise<PodProcess> =>
  startPod("zone-pod", podDir, HOST, PORT, member(), {
    ...cliEnv,
    POD_NAME: "zone-pod",
    VALKEY_ANNOUNCE_HOST: HOST,
    VALKEY_ANNOUNCE_IP: HOST,
    // No zone label (Kubernetes < 1.35) is an empty VALKEY_AVAILABILITY_ZONE, as the fieldRef gives.
    VALKEY_AVAILABILITY_ZONE: zoneLabel ?? "",
  });

const zoneOf = async (): Promise<string> =>
  (await cli(PORT, ["config", "get", "availability-zone"], PASSWORD)).split("\n")[1] ?? "";
const fileZone = (): string | undefined => (existsSync(zoneFile) ? readFileSync(zoneFile, "utf8").trim() : undefined);

afterAll(async () => {
  await pod?.stop(3000);
  rmSync(dir, { recursive: true, force: true });
});

describe("availability-zone without a pod zone label (Kubernetes < 1.35)", () => {
  it("set by the bootstrap, kept on the data volume by the member's loop, announced again after a restart", async () => {
    pod = await start();
    expect(await zoneOf()).toBe("");
    expect(fileZone()).toBeUndefined();

    const connector = new DirectConnector({ password: PASSWORD });
    const member = { id: "zone-pod", zone: "us-west-2b", endpoint: { host: HOST, port: PORT } };
    expect(await announceZones([member], connector)).toEqual({
      set: ["zone-pod: availability-zone us-west-2b"],
      unsupported: [],
    });
    expect(await zoneOf()).toBe("us-west-2b");
    // Idempotent: the same zone again sets nothing; a member without a zone is left alone.
    expect(await announceZones([member, { ...member, id: "no-zone", zone: "" }], connector)).toEqual({
      set: [],
      unsupported: [],
    });

    await eventually("the loop keeps the zone in the zone file", 20_000, () =>
      Promise.resolve(fileZone() === "us-west-2b" ? true : undefined),
    );
    expect(pod.log()).toContain(`failback: availability-zone us-west-2b kept in ${zoneFile}`);

    // A restart (same data volume, still no label): the entrypoint announces the kept zone.
    await pod.stop(3000);
    pod = await start();
    expect(await zoneOf()).toBe("us-west-2b");
  }, 60_000);

  it("a zone label (Kubernetes >= 1.35) wins over the file, and the loop keeps the new value", async () => {
    await pod?.stop(3000);
    pod = await start("us-west-2c");
    expect(await zoneOf()).toBe("us-west-2c");
    await eventually("the zone file follows the label", 20_000, () =>
      Promise.resolve(fileZone() === "us-west-2c" ? true : undefined),
    );
  }, 60_000);
});
