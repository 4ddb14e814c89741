/**
 * The haproxy.cfg the HAProxy pods mount (haproxy-manifests.ts): members and Sentinels by their
 * pod DNS names, re-resolved through the cluster DNS, the quorum checks expecting the member's DNS
 * name (what the Sentinels report with announce-hostnames), and a proxy that starts even when a
 * name does not resolve yet (checked by the real `haproxy -c`, where these names never resolve);
 * the Deployment's readiness probe on the status frontend.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { which } from "../../benchmarks/run/binaries.js";
import { masterAddrReplyHex } from "../../pod/haproxy-checks.js";
import { authCommandHex } from "../../pod/haproxy-cfg.js";
import { HAPROXY_STATUS_PORT, HAPROXY_WRITE_PORT } from "../../components/valkey/haproxy-manifests.js";
import { replicationFixture } from "../support/valkey-fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "haproxy-k8s-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the HAProxy pods' haproxy.cfg", () => {
  const m = replicationFixture();
  const cfg = m.haproxy.renderCfg("pw-k8s");

  it("lists every member by DNS name with DNS re-resolution and init-addr none, and holds the AUTH only when given", () => {
    expect(cfg).toContain("resolvers cluster-dns\n  parse-resolv-conf");
    for (const p of m.facts.pods)
      expect(cfg).toContain(
        `server ${p.name} ${p.dnsName}:6379 check inter 1000ms downinter 100ms fall 2 rise 1 on-marked-down shutdown-sessions resolvers cluster-dns resolve-prefer ipv4 init-addr last,libc,none`,
      );
    expect(cfg).toContain("bind *:6379");
    expect(cfg).toContain("bind *:6380");
    expect(cfg).toContain("bind *:8404");
    expect(cfg).toContain(authCommandHex("pw-k8s"));
    expect(m.haproxy.renderCfg(undefined)).not.toContain(authCommandHex("pw-k8s"));
  });

  it("asks every Sentinel by DNS name whether it names the member by ITS DNS name (announce-hostnames), 2 of 3 needed", () => {
    // The Sentinels report names, not IPs: the reply the checks expect carries the DNS name.
    expect(m.configMap.data?.["sentinel.conf"]).toContain("sentinel announce-hostnames yes");
    for (const p of m.facts.pods) {
      const start = cfg.indexOf(`backend quorum-${p.name}\n`);
      const end = cfg.indexOf("\nbackend ", start + 1);
      const q = cfg.slice(start, end === -1 ? undefined : end);
      expect(q).toContain(`tcp-check expect min-recv 0 rbinary ^${masterAddrReplyHex(p.dnsName, 6379).toUpperCase()}$`);
      for (const x of m.facts.sentinels)
        expect(q).toContain(
          `server ${x.name} ${x.dnsName}:26379 check inter 100ms downinter 100ms fall 1 rise 1 resolvers cluster-dns resolve-prefer ipv4 init-addr last,libc,none`,
        );
      expect(cfg).toContain(`acl named-${p.name} nbsrv(quorum-${p.name}) ge 2`);
    }
    expect(cfg).toContain("tcp-check connect addr 127.0.0.1 port 8404");
  });

  it("the proxy is ready only while a member qualifies for writes (HTTP /ready on the status port); liveness stays TCP", () => {
    const c = m.haproxy.deployment.spec?.template.spec?.containers[0];
    expect(c?.ports).toContainEqual({ name: "status", containerPort: HAPROXY_STATUS_PORT, protocol: "TCP" });
    expect(c?.readinessProbe?.httpGet).toEqual({ path: "/ready", port: "status" });
    expect(c?.livenessProbe?.tcpSocket).toEqual({ port: HAPROXY_WRITE_PORT });
    expect(cfg).toContain("  monitor-uri /ready\n");
  });

  it("is valid for the real haproxy although no member name resolves here", async () => {
    const haproxy = process.env.HAPROXY ?? which("haproxy");
    expect(haproxy, "haproxy must be installed (.ci/setup does it)").toBeDefined();
    const path = join(dir, "haproxy.cfg");
    writeFileSync(path, cfg, { mode: 0o600 });
    const out = await new Promise<{ code: number; text: string }>((resolve) =>
      execFile(haproxy as string, ["-c", "-f", path], (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : Number(err.code ?? -1), text: stdout + stderr }),
      ),
    );
    expect(out.text).toContain("Configuration file is valid");
    expect(out.code).toBe(0);
    expect(out.text).toContain("could not resolve address 'valkey-0.valkey-headless.valkey.svc.cluster.local'");
  });
});
