/**
 * `npm run images:check` for real: a real registry (tests/pods/support/image-registry.ts: Debian's
 * docker-registry answering with a Bearer challenge) holding the local images (images.sh) under the
 * stack's own names, reached through `--mirror` as an ECR pull-through cache would be; real podman
 * pulling by digest and running every check; the images together in both modes. What it cannot show
 * here: the images of the registries themselves (public.ecr.aws, quay.io: not reachable), whose
 * digests README lists as unconfirmed until someone runs the command with access.
 *
 * Needs root, the local images and podman, skopeo and docker-registry (`bash .ci/setup --pods`);
 * skipped with the reason otherwise.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { parseImageReference } from "../../config/fields.js";
import type { ImagesReport } from "../../stacks/images-check/check.js";
import { versions } from "../../versions.js";
import { runVbench } from "../support/verify-helpers.js";
import { podsSkipReason } from "./support/byo-on-pods.js";
import {
  manifestOf,
  missingRegistryTools,
  podmanEnv,
  pushArchive,
  putIndex,
  run,
  startRegistry,
  type LocalRegistry,
} from "./support/image-registry.js";

const ROOT = join(import.meta.dirname, "../..");
const missing = process.getuid?.() === 0 ? missingRegistryTools() : [];
const reason =
  podsSkipReason({ pulumi: false }) ||
  (missing.length > 0 ? `not installed: ${missing.join(", ")} (bash .ci/setup --pods)` : "");

type Report = ImagesReport & { ok: boolean; pins: string[] };
const ARM = { os: "linux", architecture: "arm64", variant: "v8" };
const AMD = { os: "linux", architecture: "amd64" };
const MIRRORS = ["public.ecr.aws", "quay.io"];

/** `registry/path:tag` → the repository under the mirror's prefix, and the tag. */
function inMirror(ref: string): { repository: string; tag: string } {
  const p = parseImageReference(ref);
  const [host = "", ...path] = (p?.name ?? "").split("/");
  return { repository: `${host.replace(/\W/g, "-")}/${path.join("/")}`, tag: p?.tag ?? "" };
}

describe.skipIf(reason !== "")(
  `images:check against a real registry and podman${reason ? ` (skipped: ${reason})` : ""}`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), "images-check-"));
    let reg: LocalRegistry;
    let env: Record<string, string>;
    /** The HAProxy stand-in's own version (Debian's), and the index digests the registry serves. */
    let haproxyHeld = "";
    const served = new Map<string, string>();

    const archives = (): Record<string, string> =>
      Object.fromEntries(
        execFileSync("bash", [join(ROOT, "apps/kube-local/images.sh")], { encoding: "utf8" })
          .trim()
          .split("\n")
          .map((l) => l.split(" "))
          .map(([name, , archive]): [string, string] => [name ?? "", archive ?? ""]),
      );

    /** Pushes `archive` as `ref` (through the mirror's names) and makes it an index of `platforms`. */
    async function publish(archive: string, ref: string, platforms = [AMD, ARM]): Promise<void> {
      const { repository, tag } = inMirror(ref);
      await pushArchive(reg, archive, repository, `${tag}-single`);
      served.set(ref, await putIndex(reg, repository, `${tag}-single`, tag, platforms));
    }

    beforeAll(async () => {
      reg = await startRegistry(join(dir, "registry"));
      env = podmanEnv(dir);
      const a = archives();
      const haproxy = a["haproxy"] as string;
      await publish(a["valkey"] as string, versions.VALKEY_IMAGE);
      await publish(a["node"] as string, versions.DRILL_LOAD_IMAGE);
      await publish(a["exporter"] as string, versions.EXPORTER_IMAGE);
      await publish(haproxy, versions.HAPROXY_IMAGE); // the stand-in under the deployed tag: a tag that lies
      // The stand-in's own version, asked of the image in the registry, then published under it too.
      const { repository } = inMirror(versions.HAPROXY_IMAGE);
      const pulled = `${reg.host}/${repository}@${served.get(versions.HAPROXY_IMAGE)}`;
      await run("podman", ["pull", "-q", "--tls-verify=false", pulled], env);
      const v = await run("podman", ["run", "--rm", "--network", "none", "--entrypoint", "haproxy", pulled, "-v"], env);
      haproxyHeld = /version (\d+\.\d+\.\d+)/.exec(v)?.[1] ?? "";
      if (haproxyHeld === "") throw new Error(`no version in the HAProxy stand-in's -v: ${v}`);
      await publish(haproxy, versions.HAPROXY_IMAGE.replace(/:[^:@]+$/, `:${haproxyHeld}`));
      // The exporter without the nodes' arm64: one platform only.
      const { repository: exporter, tag } = inMirror(versions.EXPORTER_IMAGE);
      await pushArchive(reg, a["exporter"] as string, exporter, `${tag}-amd64-only`);
    }, 900_000);

    afterAll(async () => {
      await reg?.stop();
      await run("podman", ["system", "reset", "--force"], env).catch(() => "");
      rmSync(dir, { recursive: true, force: true });
    });

    function stackFile(base: string, edit: (config: Record<string, Record<string, unknown>>) => void): string {
      const doc = parse(readFileSync(join(ROOT, "stacks", base), "utf8")) as {
        config: Record<string, Record<string, unknown>>;
      };
      doc.config["valkey-on-eks:drills"] = { enabled: true };
      edit(doc.config);
      const file = join(dir, `${Math.random().toString(36).slice(2)}-${base}`);
      writeFileSync(file, stringify(doc));
      return file;
    }

    async function check(file: string): Promise<{ code: number; report: Report; stderr: string }> {
      const mirror = MIRRORS.flatMap((m) => ["--mirror", `${m}=http://${reg.host}/${m.replace(/\W/g, "-")}`]);
      const r = await runVbench(
        ["images-check", "--file", file, "--engine", "podman", ...mirror, "--json"],
        env,
        900_000,
      );
      if (r.stdout.trim() === "") throw new Error(`images-check printed nothing (exit ${r.code}): ${r.stderr}`);
      return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
    }

    const rows = (r: Report) => [
      ...r.images.flatMap((i) => i.rows.map((x) => `${i.ref} ${x.check}: ${x.ok ? "ok" : "FAIL"} ${x.detail}`)),
      ...r.live.map((x) => `live ${x.check}: ${x.ok ? "ok" : "FAIL"} ${x.detail}`),
    ];

    it("replication mode: each image at the digest the registry serves, its versions, the stack's haproxy.cfg, the images together", async () => {
      const haproxyImage = versions.HAPROXY_IMAGE.replace(/:[^:@]+$/, `:${haproxyHeld}`);
      const file = stackFile("Pulumi.replication.yaml", (c) => {
        const valkey = c["valkey-on-eks:valkey"] as { replication: Record<string, unknown> };
        valkey.replication.haproxyImage = haproxyImage;
      });
      const { code, report } = await check(file);
      process.stdout.write(`${rows(report).join("\n")}\n`);
      expect(report.images.filter((i) => i.rows.some((x) => !x.ok))).toEqual([]);
      expect(code).toBe(0);
      expect(report.requiredPlatform).toBe("linux/arm64");
      expect(report.images.map((i) => [i.ref, i.resolved?.digest])).toEqual(
        [versions.VALKEY_IMAGE, haproxyImage, versions.DRILL_LOAD_IMAGE, versions.EXPORTER_IMAGE].map((r) => [
          r,
          served.get(r),
        ]),
      );
      expect(report.images.find((i) => i.role === "haproxy")?.rows.map((x) => x.check)).toEqual([
        "registry",
        "pull",
        "haproxy",
        "haproxy -c",
      ]);
      expect(report.live.map((x) => [x.check, x.ok])).toEqual([
        ["server", true],
        ["exporter scrape", true],
        ["write endpoint", true],
        ["benchmark Job", true],
        ["drill load", true],
      ]);
      expect(report.live.find((x) => x.check === "drill load")?.detail).toMatch(
        /sentinel-client \d+ acknowledged.*write-endpoint\+wait \d+ acknowledged, 0 failed/,
      );
      expect(report.pins).toContain(`VALKEY_IMAGE=${versions.VALKEY_IMAGE}@${served.get(versions.VALKEY_IMAGE)}`);
      expect(report.pins).toContain(
        `pulumi config set --path valkey-on-eks:valkey.replication.haproxyImage ${haproxyImage}@${served.get(haproxyImage)}`,
      );
      // Every repository was read through the registry's challenge, with a pull-only token.
      for (const ref of [versions.VALKEY_IMAGE, haproxyImage])
        expect(reg.scopes).toContain(`repository:${inMirror(ref).repository}:pull`);
    }, 900_000);

    it("cluster mode: three primaries with replicas, the benchmark Job's script and the load's cluster client", async () => {
      const { code, report } = await check(stackFile("Pulumi.cluster.yaml", () => undefined));
      process.stdout.write(`${rows(report).join("\n")}\n`);
      expect(code).toBe(0);
      expect(report.images.map((i) => i.role)).toEqual(["valkey", "node", "exporter"]);
      expect(report.live.map((x) => [x.check, x.ok])).toEqual([
        ["server", true],
        ["exporter scrape", true],
        ["benchmark Job", true],
        ["drill load", true],
      ]);
      expect(report.live.find((x) => x.check === "drill load")?.detail).toMatch(
        /cluster-client@0-5460 \d+ acknowledged/,
      );
    }, 900_000);

    it("refuses, naming each: a tag that names another version than the image holds, an image without the nodes' arm64", async () => {
      const amd64Only = `${versions.EXPORTER_IMAGE}-amd64-only`;
      const file = stackFile("Pulumi.replication.yaml", (c) => {
        c["valkey-on-eks:metrics"] = { exporterImage: amd64Only };
      });
      const { code, report } = await check(file);
      expect(code).toBe(1);
      expect(report.ok).toBe(false);
      const failed = (ref: string) =>
        report.images
          .find((i) => i.ref === ref)
          ?.rows.filter((x) => !x.ok)
          .map((x) => x.detail);
      expect(failed(versions.HAPROXY_IMAGE)).toEqual([
        `the tag says ${versions.HAPROXY_IMAGE.split(":").pop()}, the image holds HAProxy ${haproxyHeld}`,
      ]);
      const single = await manifestOf(reg, inMirror(amd64Only).repository, inMirror(amd64Only).tag);
      expect(failed(amd64Only)).toEqual([
        `${single.digest} offers linux/amd64: no linux/arm64, the platform of the stack's nodes`,
      ]);
      expect(report.live.find((x) => x.check === "write endpoint")).toEqual(
        expect.objectContaining({ ok: false, detail: "not run: the HAProxy image failed its own checks" }),
      );
      expect(report.pins.some((p) => p.startsWith("HAPROXY_IMAGE") || p.includes("exporterImage"))).toBe(false);
    }, 900_000);
  },
);
