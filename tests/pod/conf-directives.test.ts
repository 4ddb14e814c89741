/**
 * The live/restart classification of valkey.conf directives (pod/conf-directives.ts): it covers
 * every line each renderer writes, its parse of values is what CONFIG SET takes, its claims about
 * Valkey hold on the pinned valkey-server (each LIVE and each "settable" directive is CONFIG SET
 * on a real server; each "immutable" / "protected" one is refused), and the table in
 * docs/day-2.md is the one it generates.
 */
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalFleet, type ValkeyProcess } from "../../harness/local/valkey-process.js";
import {
  CONF_DIRECTIVES,
  confLines,
  directiveClass,
  liveDirectives,
  restartFiles,
  restartPart,
  type DirectiveClass,
} from "../../pod/conf-directives.js";
import { renderDeployedLocalConf } from "../../pod/local-conf.js";
import { VALKEY_CONF_KEY } from "../../pod/member.js";
import {
  DIRECTIVE_TABLE_DOC,
  DIRECTIVE_TABLE_END,
  DIRECTIVE_TABLE_START,
  renderDirectiveTable,
  replaceDirectiveTable,
} from "../../pod/render-directive-table.js";
import { renderValkeyConf, type ConfRole } from "../../pod/valkey-conf.js";
import { valkeyConfig } from "../support/valkey-fixtures.js";
import { CLUSTER_MEMBER_LIVE_KEYS } from "../support/live-keys.js";

const ROLES: ConfRole[] = [
  { kind: "cluster-member" },
  { kind: "replication-member" },
  { kind: "primary" },
  { kind: "replica", primaryHost: "p.example" },
];
const TABLE = CONF_DIRECTIVES as Record<string, DirectiveClass>;

/** Every conf a renderer writes: each role, deployed and with every local line. */
function everyConf(): string[] {
  const v = valkeyConfig();
  const local = {
    logfile: "/tmp/x.log",
    appendonly: false,
    save: "",
    ioThreads: 2,
    clusterNodeTimeoutMs: 900,
    clusterEndpointType: "ip" as const,
    bindSourceAddr: "127.0.0.2",
  };
  return ROLES.flatMap((role) => [renderValkeyConf(v, { role }), renderDeployedLocalConf(v, { role }, local)]);
}

describe("the classification covers what the renderers write", () => {
  it("classifies every directive of every rendered conf, and every classified directive is rendered (the auth include's aside)", () => {
    const rendered = new Set(everyConf().flatMap((c) => confLines(c).map((l) => l.key)));
    for (const key of rendered) expect(() => directiveClass(key), key).not.toThrow();
    // requirepass / masterauth: written into auth.conf by start.sh from the Secret, never into valkey.conf.
    expect(Object.keys(TABLE).filter((k) => !rendered.has(k))).toEqual(["requirepass", "masterauth"]);
  });

  it("names an unknown directive and where to classify it", () => {
    expect(() => directiveClass("lazyfree-lazy-eviction")).toThrow(
      /'lazyfree-lazy-eviction' is not classified.*pod\/conf-directives\.ts/,
    );
    expect(() => restartPart("port 1\nlatency-tracking yes\n")).toThrow(/latency-tracking/);
  });

  it("the LIVE directives of the deployed member confs are memory, persistence, fencing and cluster timing; io-threads, port, dir and the cluster identity are not", () => {
    const v = valkeyConfig();
    expect(Object.keys(liveDirectives(renderValkeyConf(v, { role: { kind: "cluster-member" } }))).sort()).toEqual([
      ...CLUSTER_MEMBER_LIVE_KEYS,
    ]);
    const replication = renderValkeyConf(v, { role: { kind: "replication-member" } });
    expect(liveDirectives(replication)).toEqual({
      "protected-mode": "no",
      "maxmemory": "9663676416",
      "maxmemory-policy": "allkeys-lru",
      "appendonly": "yes",
      "appendfsync": "everysec",
      "save": "3600 1 300 100 60 10000",
      "repl-diskless-sync-delay": "3",
      "min-replicas-to-write": "1",
      "min-replicas-max-lag": "7",
      "replica-read-only": "yes",
    });
    const rest = restartPart(replication);
    for (const kept of ["port 6379", "io-threads 3", 'dir "/data"', 'include "/run/valkey/auth.conf"', "# valkey.conf"])
      expect(rest).toContain(kept);
    for (const gone of ["maxmemory", "appendonly", "save", "min-replicas"]) expect(rest).not.toContain(gone);
  });

  it("parses values as CONFIG SET takes them: quotes removed, the last occurrence wins (a local line over the deployed one)", () => {
    const conf = renderDeployedLocalConf(
      valkeyConfig(),
      { role: { kind: "primary" } },
      { logfile: "/tmp/a.log", save: "", appendonly: false },
    );
    expect(liveDirectives(conf)).toMatchObject({ save: "", appendonly: "no" });
    expect(confLines('dir "/a \\"b\\" \\\\c"')[0]).toMatchObject({ key: "dir", value: '/a "b" \\c' });
  });

  it("restartFiles reduces only valkey.conf; the scripts stay whole", () => {
    const files = { [VALKEY_CONF_KEY]: "port 1\nmaxmemory 5\n", "start.sh": "maxmemory 5\n" };
    expect(restartFiles(files)).toEqual({ [VALKEY_CONF_KEY]: "port 1\n", "start.sh": "maxmemory 5\n" });
  });
});

describe("the classification's claims on the pinned valkey-server (a real process)", () => {
  const fleet = new LocalFleet();
  let server: ValkeyProcess;
  let c: Redis;
  beforeAll(async () => {
    server = await fleet.start({ name: "conf-directives" });
    c = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    await c.connect();
  }, 60_000);
  afterAll(async () => {
    c?.disconnect();
    await fleet.stopAll();
  });

  const setToCurrent = async (key: string): Promise<string> => {
    const [, value] = (await c.call("CONFIG", "GET", key)) as [string, string];
    try {
      return String(await c.call("CONFIG", "SET", key, value));
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("takes CONFIG SET of each LIVE and each 'settable' directive, and refuses each 'immutable' and 'protected' one", async () => {
    const got: Record<string, string> = {};
    for (const [key, cls] of Object.entries(TABLE)) {
      if (cls.valkey === "not-a-config") continue;
      got[key] = await setToCurrent(key);
    }
    const want = Object.fromEntries(
      Object.entries(TABLE)
        .filter(([, cls]) => cls.valkey !== "not-a-config")
        .map(([key, cls]) => [
          key,
          cls.valkey === "settable" ? "OK" : expect.stringMatching(new RegExp(`can't set ${cls.valkey} config`)),
        ]),
    );
    expect(got).toEqual(want);
    // Every LIVE directive is one Valkey itself calls settable.
    expect(Object.entries(TABLE).filter(([, cls]) => cls.apply === "live" && cls.valkey !== "settable")).toEqual([]);
    expect(server.alive()).toBe(true);
  });
});

describe(`the table in ${DIRECTIVE_TABLE_DOC}`, () => {
  it("is the generated one (npx tsx pod/render-directive-table.ts --write)", () => {
    const doc = readFileSync(DIRECTIVE_TABLE_DOC, "utf8");
    expect(doc).toContain(DIRECTIVE_TABLE_START);
    expect(doc).toContain(DIRECTIVE_TABLE_END);
    expect(replaceDirectiveTable(doc, renderDirectiveTable())).toBe(doc);
  });

  it("has one row per classified directive, LIVE first", () => {
    const rows = renderDirectiveTable().split("\n").slice(2);
    expect(rows).toHaveLength(Object.keys(TABLE).length);
    const kinds = rows.map((r) => (r.includes("live (`CONFIG SET`)") ? "live" : "restart"));
    expect(kinds.indexOf("restart")).toBe(kinds.filter((k) => k === "live").length);
  });
});
