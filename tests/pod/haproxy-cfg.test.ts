/**
 * haproxy.cfg of the write/read endpoints (pod/haproxy-cfg.ts), as text and
 * through the real `haproxy -c`: the write rule (a Sentinel majority names the member AND it
 * says role:master, no other member named), the quorum backends' exact Sentinel reply, the
 * status frontend, AUTH in hex only. Behaviour on real processes: tests/pod/haproxy-quorum.test.ts.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { which } from "../../benchmarks/run/binaries.js";
import { commandHex, masterAddrReplyHex } from "../../pod/haproxy-checks.js";
import { authCommandHex, renderHaproxyCfg, sentinelMajority, type HaproxyCfgOptions } from "../../pod/haproxy-cfg.js";

const PASSWORD = `s3cr3t "with" spaces\\`;
const dir = mkdtempSync(join(tmpdir(), "haproxy-cfg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const run = (cmd: string, args: string[]): Promise<{ code: number; out: string }> =>
  new Promise((resolve) =>
    execFile(cmd, args, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number(err.code ?? -1), out: stdout + stderr }),
    ),
  );

const servers = [0, 1, 2].map((i) => ({ name: `member-${i}`, host: `127.0.0.${20 + i}`, port: 7000 + i }));
const sentinels = [0, 1, 2].map((i) => ({ name: `sentinel-${i}`, host: `127.0.0.${70 + i}`, port: 26000 + i }));
const base: HaproxyCfgOptions = {
  servers,
  sentinels,
  masterName: "valkey-primary",
  write: { host: "127.0.0.1", port: 6400 },
  read: { host: "127.0.0.1", port: 6401 },
  status: { host: "127.0.0.1", port: 8404 },
  password: PASSWORD,
};
const cfg = renderHaproxyCfg(base);
/** The text of one section, up to the next top-level keyword. */
const section = (text: string, header: string): string => {
  const start = text.indexOf(`\n${header}\n`);
  expect(start, `${header} exists`).toBeGreaterThan(-1);
  const rest = text.slice(start + 1);
  const next = rest.slice(header.length + 1).search(/^\S/m);
  return next === -1 ? rest : rest.slice(0, header.length + 1 + next);
};

describe("haproxy.cfg", () => {
  it("is valid for the real haproxy (-c)", async () => {
    const haproxy = process.env.HAPROXY ?? which("haproxy");
    expect(haproxy, "haproxy must be installed (.ci/setup does it)").toBeDefined();
    const path = join(dir, "haproxy.cfg");
    writeFileSync(path, cfg, { mode: 0o600 });
    const r = await run(haproxy!, ["-c", "-f", path]);
    expect(r.out).toContain("Configuration file is valid");
    expect(r.out).not.toMatch(/WARNING|ALERT/);
    expect(r.code).toBe(0);
  });

  it("write frontend: member m only while a Sentinel majority names it, it says role:master and no other member is named; no default backend", () => {
    const front = section(cfg, "frontend valkey-write");
    expect(front).not.toContain("default_backend");
    expect(front).toContain(
      "  acl named-member-1 nbsrv(quorum-member-1) ge 2\n  acl master-member-1 nbsrv(write-member-1) ge 1",
    );
    expect(front).toContain(
      "  use_backend write-member-1 if master-member-1 named-member-1 !named-member-0 !named-member-2",
    );
    expect(front.match(/use_backend/g)).toHaveLength(3);
  });

  it("write-<m>: role:master (INFO and QUIT in one send), then HAProxy's own /quorum/<m>; sessions cut when it goes down", () => {
    const write = section(cfg, "backend write-member-2");
    const infoQuit = Buffer.from("*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n*1\r\n$4\r\nQUIT\r\n").toString("hex");
    expect(write).toContain(`tcp-check send-binary ${infoQuit}\n  tcp-check expect string role:master`);
    expect(write).not.toContain("role:slave");
    const get = Buffer.from("GET /quorum/member-2 HTTP/1.0\r\n\r\n").toString("hex");
    expect(write).toContain(
      `  tcp-check connect addr 127.0.0.1 port 8404\n  tcp-check send-binary ${get}\n  tcp-check expect rstring ^HTTP/1[.][01]\\ 200[^0-9]`,
    );
    expect(write.indexOf("role:master")).toBeLessThan(write.indexOf("connect addr"));
    // A DOWN member (a replica) is checked every 100 ms: a promoted one qualifies 0.1 s after its quorum backend.
    expect(write).toContain(
      "server member-2 127.0.0.22:7002 check inter 1000ms downinter 100ms fall 2 rise 1 on-marked-down shutdown-sessions\n",
    );
    expect(write.match(/^ {2}server /gm)).toHaveLength(1);
  });

  it("quorum-<m>: every Sentinel, asked GET-MASTER-ADDR-BY-NAME, must answer exactly m's host and port (a complete reply, then a conclusive exact match)", () => {
    const q = section(cfg, "backend quorum-member-0");
    const ask = Buffer.from(
      "*3\r\n$8\r\nSENTINEL\r\n$23\r\nGET-MASTER-ADDR-BY-NAME\r\n$14\r\nvalkey-primary\r\n",
    ).toString("hex");
    const exact = Buffer.from("*2\r\n$10\r\n127.0.0.20\r\n$4\r\n7000\r\n").toString("hex").toUpperCase();
    expect(q).toContain(
      `  tcp-check send-binary ${ask}\n` +
        "  tcp-check expect rstring ^([*]2\\r\\n[$][0-9]+\\r\\n[^\\r]*\\r\\n[$][0-9]+\\r\\n[0-9]+|[*]-1|-[^\\r]*)\\r\\n\n" +
        `  tcp-check expect min-recv 0 rbinary ^${exact}$\n`,
    );
    expect(masterAddrReplyHex("127.0.0.20", 7000).toUpperCase()).toBe(exact);
    // UP (naming m) and DOWN every 100 ms: the endpoint follows the Sentinels within about 0.1 s.
    for (const s of sentinels)
      expect(q).toContain(`  server ${s.name} ${s.host}:${s.port} check inter 100ms downinter 100ms fall 1 rise 1\n`);
    expect(q).not.toContain("shutdown-sessions");
  });

  it("check timeouts: 2 s for a member's check (defaults), 3 s for a Sentinel's (its quorum backend); both overridable", () => {
    expect(section(cfg, "defaults")).toContain("  timeout connect 2000ms\n  timeout check 2000ms\n");
    for (const s of servers)
      expect(section(cfg, `backend quorum-${s.name}`)).toMatch(/^backend quorum-member-\d\n {2}timeout check 3000ms\n/);
    expect(section(cfg, "backend write-member-0")).not.toContain("timeout");
    const set = renderHaproxyCfg({ ...base, checkTimeoutMs: 1000, sentinelCheckTimeoutMs: 1500 });
    expect(section(set, "defaults")).toContain("  timeout check 1000ms\n");
    expect(section(set, "backend quorum-member-1")).toContain("  timeout check 1500ms\n");
  });

  it("status frontend: /ready fails unless some member qualifies; /quorum/<m> 200 only while the majority names m", () => {
    const st = section(cfg, "frontend status");
    expect(st).toContain("  mode http\n  bind 127.0.0.1:8404");
    expect(st).toContain("  monitor-uri /ready");
    expect(st).toContain(
      "  monitor fail unless master-member-0 named-member-0 !named-member-1 !named-member-2 || master-member-1 named-member-1 !named-member-0 !named-member-2 || master-member-2 named-member-2 !named-member-0 !named-member-1",
    );
    expect(st).toContain(
      "  http-request return status 200 if { path /quorum/member-0 } named-member-0\n  http-request return status 503 if { path /quorum/member-0 }",
    );
    // Bound to every address: the write checks reach it on loopback.
    expect(renderHaproxyCfg({ ...base, status: { host: "*", port: 8404 } })).toContain(
      "tcp-check connect addr 127.0.0.1 port 8404",
    );
  });

  it("read endpoint: role:slave only, every member", () => {
    const read = section(cfg, "backend valkey-replicas");
    expect(read).toContain("tcp-check expect string role:slave");
    for (const s of servers)
      expect(read).toContain(
        `server ${s.name} ${s.host}:${s.port} check inter 1000ms fall 2 rise 1 on-marked-down shutdown-sessions\n`,
      );
    expect(renderHaproxyCfg({ ...base, read: undefined })).not.toContain("valkey-read");
  });

  it("a majority is ⌊S/2⌋+1: two members can never both have one", () => {
    expect([1, 2, 3, 4, 5].map(sentinelMajority)).toEqual([1, 2, 2, 3, 3]);
    const five = renderHaproxyCfg({
      ...base,
      sentinels: [0, 1, 2, 3, 4].map((i) => ({ name: `s${i}`, host: `10.0.0.${i}`, port: 26379 })),
    });
    expect(five).toContain("acl named-member-0 nbsrv(quorum-member-0) ge 3");
  });

  it("sends AUTH (members and Sentinels) as a RESP array in hex: any password byte survives, the text never appears in clear", () => {
    const hex = authCommandHex(PASSWORD);
    expect(Buffer.from(hex, "hex").toString("utf8")).toBe(
      `*2\r\n$4\r\nAUTH\r\n$${Buffer.byteLength(PASSWORD)}\r\n${PASSWORD}\r\n`,
    );
    expect(section(cfg, "backend write-member-0")).toContain(`tcp-check send-binary ${hex}`);
    expect(section(cfg, "backend quorum-member-0")).toContain(`tcp-check send-binary ${hex}`);
    expect(cfg).not.toContain("s3cr3t");
    const open = renderHaproxyCfg({ ...base, password: undefined });
    expect(open).not.toContain(commandHex("AUTH", "x").slice(0, 24));
  });

  it("source: every connection to the servers and Sentinels (sessions and checks) from that address, set in defaults; valid for the real haproxy", async () => {
    const withSource = renderHaproxyCfg({ ...base, source: "127.0.0.120" });
    expect(section(withSource, "defaults")).toContain("  source 127.0.0.120\n");
    expect(cfg).not.toContain("source ");
    const path = join(dir, "haproxy-source.cfg");
    writeFileSync(path, withSource, { mode: 0o600 });
    const r = await run(process.env.HAPROXY ?? which("haproxy")!, ["-c", "-f", path]);
    expect(r.out).toContain("Configuration file is valid");
    expect(r.out).not.toMatch(/WARNING|ALERT/);
    expect(() => renderHaproxyCfg({ ...base, source: "10.0.0.1 usesrc clientip" })).toThrow(
      /source must be an IP address/,
    );
  });

  it("rejects bad input naming the fault", () => {
    expect(() => renderHaproxyCfg({ ...base, servers: [] })).toThrow(/servers must name at least one Valkey member/);
    expect(() => renderHaproxyCfg({ ...base, sentinels: [] })).toThrow(/sentinels must name at least one Sentinel/);
    expect(() => renderHaproxyCfg({ ...base, servers: [{ name: "a b", host: "h", port: 1 }] })).toThrow(
      /servers name 'a b'/,
    );
    expect(() => renderHaproxyCfg({ ...base, sentinels: [sentinels[0]!, sentinels[0]!] })).toThrow(
      /sentinels names must be unique/,
    );
    expect(() => renderHaproxyCfg({ ...base, masterName: "a b" })).toThrow(/masterName 'a b'/);
    expect(() => renderHaproxyCfg({ ...base, status: { host: "localhost", port: 1 } })).toThrow(
      /status host 'localhost' must be an IPv4 address or \*/,
    );
    expect(() => renderHaproxyCfg({ ...base, checkIntervalMs: 0 })).toThrow(/checkIntervalMs/);
    expect(() => renderHaproxyCfg({ ...base, sentinelCheckTimeoutMs: 2.5 })).toThrow(
      /sentinelCheckTimeoutMs must be a whole number of milliseconds/,
    );
    expect(() => renderHaproxyCfg({ ...base, fall: 0 })).toThrow(/fall must be a whole number from 1 to 100 \(got 0\)/);
    expect(() => renderHaproxyCfg({ ...base, rise: 1.5 })).toThrow(/rise must be a whole number/);
  });
});
