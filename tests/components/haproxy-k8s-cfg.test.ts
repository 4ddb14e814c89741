/**
 * The haproxy.cfg the HAProxy pods mount (haproxy-manifests.ts): members by their pod DNS names,
 * re-resolved through the cluster DNS, and a proxy that starts even when a name does not resolve
 * yet (checked by the real `haproxy -c`, where these names never resolve).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { which } from "../../benchmarks/binaries.js";
import { authCommandHex } from "../../components/valkey/haproxy-cfg.js";
import { buildReplicationManifests } from "../../components/valkey/replication-manifests.js";
import { PLACEMENT, valkeyConfig } from "../support/valkey-fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "haproxy-k8s-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the HAProxy pods' haproxy.cfg", () => {
  const m = buildReplicationManifests({ namespace: "valkey", release: "valkey", valkey: valkeyConfig(), placement: PLACEMENT, auth: true });
  const cfg = m.haproxy.renderCfg("pw-k8s");

  it("lists every member by DNS name with DNS re-resolution and init-addr none, and holds the AUTH only when given", () => {
    expect(cfg).toContain("resolvers cluster-dns\n  parse-resolv-conf");
    for (const p of m.facts.pods)
      expect(cfg).toContain(
        `server ${p.name} ${p.dnsName}:6379 check inter 1000ms fall 2 rise 1 on-marked-down shutdown-sessions resolvers cluster-dns resolve-prefer ipv4 init-addr last,libc,none`,
      );
    expect(cfg).toContain("bind *:6379");
    expect(cfg).toContain("bind *:6380");
    expect(cfg).toContain(authCommandHex("pw-k8s"));
    expect(m.haproxy.renderCfg(undefined)).not.toContain(authCommandHex("pw-k8s"));
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
