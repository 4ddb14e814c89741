/**
 * The images check's pure parts: which images a stack pulls, where a reference is served (mirrors,
 * Docker Hub's names), the registry's challenge, what each image must answer, the engine's argv
 * (a secret by name only) and a rendered Job pod as an engine run. The check against a real
 * registry and engine: tests/pods/images-check.test.ts.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../config/schema.js";
import { runArgs } from "../../stacks/images-check/engine.js";
import { pinLines, type ImagesReport } from "../../stacks/images-check/check.js";
import { requiredPlatform, stackImages, tagVersion } from "../../stacks/images-check/images.js";
import { podRunSpec } from "../../stacks/images-check/pod-run.js";
import { locateImage, parseBearerChallenge, parseMirror } from "../../stacks/images-check/registry.js";
import { versionChecks } from "../../stacks/images-check/version-checks.js";
import { versions } from "../../versions.js";

const config = (raw: Record<string, unknown>) => parseStackConfig(raw).config;

describe("stackImages", () => {
  it("replication mode with drills, metrics and backup: every image once, with its keys and pins", () => {
    const images = stackImages(
      config({
        valkey: { mode: "replication" },
        drills: { enabled: true },
        backup: { enabled: true, bucket: "valkey-backups" },
      }),
    );
    expect(images.map((i) => [i.role, i.ref, i.keys, i.pinKey])).toEqual([
      ["valkey", versions.VALKEY_IMAGE, ["valkey.image"], "VALKEY_IMAGE"],
      ["haproxy", versions.HAPROXY_IMAGE, ["valkey.replication.haproxyImage"], "HAPROXY_IMAGE"],
      ["node", versions.DRILL_LOAD_IMAGE, ["drills.image"], "DRILL_LOAD_IMAGE"],
      ["aws-cli", versions.AWS_CLI_IMAGE, ["backup.awsCliImage"], "AWS_CLI_IMAGE"],
      ["exporter", versions.EXPORTER_IMAGE, ["metrics.exporterImage"], "EXPORTER_IMAGE"],
    ]);
    expect(images[0]?.uses).toContain("the benchmark Job's valkey-benchmark");
  });

  it("cluster mode without metrics or drills: the Valkey image only; a stack's own image has no pin key", () => {
    const images = stackImages(
      config({ valkey: { mode: "cluster", image: "example.com/v/valkey:9.1.0" }, metrics: { enabled: false } }),
    );
    expect(images).toEqual([
      expect.objectContaining({ role: "valkey", ref: "example.com/v/valkey:9.1.0", keys: ["valkey.image"] }),
    ]);
    expect(images[0]?.pinKey).toBeUndefined();
  });

  it("a mix: the Node image serves drills.image and benchmark.mixImage, once", () => {
    const images = stackImages(
      config({
        drills: { enabled: true },
        benchmark: { mix: "get:80,set:20", loadgenImage: "example.com/vload:abc" },
      }),
    );
    const node = images.filter((i) => i.role === "node");
    expect(node).toHaveLength(1);
    expect(node[0]?.keys).toEqual(["drills.image", "benchmark.mixImage"]);
    expect(images.find((i) => i.role === "loadgen")?.ref).toBe("example.com/vload:abc");
    expect(images[0]?.uses).not.toContain("the benchmark Job's valkey-benchmark");
  });

  it("the nodes' platform: arm64 where Karpenter launches them, none on byo's own nodes", () => {
    const managedPool = { manageKarpenterNodePool: true, karpenterNodeRole: "r", karpenterDiscoveryTag: "t" };
    expect(requiredPlatform(config({ platform: "eks" }))).toBe("linux/arm64");
    expect(requiredPlatform(config({ platform: "byo" }))).toBeUndefined();
    expect(requiredPlatform(config({ platform: "byo", byo: managedPool }))).toBe("linux/arm64");
  });

  it.each([
    ["public.ecr.aws/valkey/valkey:9.1.2", "9.1.2"],
    ["quay.io/oliver006/redis_exporter:v1.45.0", "1.45.0"],
    ["node:24.9.0-alpine", "24.9.0"],
    ["haproxy:3.2", "3.2"],
    ["valkey:latest", undefined],
    [`valkey@sha256:${"a".repeat(64)}`, undefined],
  ])("tagVersion(%s) = %s", (ref, want) => {
    expect(tagVersion(ref)).toBe(want);
  });
});

describe("locateImage", () => {
  const mirror = parseMirror("public.ecr.aws=http://127.0.0.1:5000/ecr-public/");
  it.each([
    ["valkey:9.1", [], "https://registry-1.docker.io", "library/valkey", "9.1", "docker.io/library/valkey", false],
    ["bitnami/valkey:9", [], "https://registry-1.docker.io", "bitnami/valkey", "9", "docker.io/bitnami/valkey", false],
    ["quay.io/o/e:v1", [], "https://quay.io", "o/e", "v1", "quay.io/o/e", false],
    ["localhost:5000/v:1", [], "https://localhost:5000", "v", "1", "localhost:5000/v", false],
    [
      "public.ecr.aws/valkey/valkey:9.1.2",
      [mirror],
      "http://127.0.0.1:5000",
      "ecr-public/valkey/valkey",
      "9.1.2",
      "127.0.0.1:5000/ecr-public/valkey/valkey",
      true,
    ],
    [
      `public.ecr.aws/v/v:1@sha256:${"b".repeat(64)}`,
      [],
      "https://public.ecr.aws",
      "v/v",
      `sha256:${"b".repeat(64)}`,
      "public.ecr.aws/v/v",
      false,
    ],
  ] as const)("%s", (ref, mirrors, api, repository, reference, pullName, insecure) => {
    expect(locateImage(ref, mirrors)).toEqual({ api, repository, reference, pullName, insecure });
  });

  it.each(["public.ecr.aws", "=http://x", "public.ecr.aws=ftp://x", "public.ecr.aws=http://x?y=1"])(
    "--mirror %s is refused, naming the form",
    (text) => {
      expect(() => parseMirror(text)).toThrow(/expected <registry>=<http\(s\):\/\/host/);
    },
  );

  it("reads a Bearer challenge, and nothing else", () => {
    expect(
      parseBearerChallenge('Bearer realm="https://public.ecr.aws/token/",service="public.ecr.aws",scope="x"'),
    ).toEqual({
      realm: "https://public.ecr.aws/token/",
      service: "public.ecr.aws",
    });
    expect(parseBearerChallenge('Basic realm="x"')).toBeUndefined();
    expect(parseBearerChallenge(null)).toBeUndefined();
    expect(parseBearerChallenge('Bearer service="x"')).toBeUndefined();
  });
});

describe("versionChecks", () => {
  const judge = (role: "valkey" | "haproxy" | "aws-cli" | "exporter", ref: string, name: string, out: string) => {
    const image = { role, ref, keys: [], uses: [] };
    const check = versionChecks(image).find((c) => c.name === name);
    if (check === undefined) throw new Error(`no check ${name}`);
    return check.judge(out);
  };
  it.each([
    ["valkey", "v/valkey:9.1.2", "valkey-server", "Valkey server v=9.1.2 sha=0", undefined],
    ["valkey", "v/valkey:9.1", "valkey-server", "Valkey server v=9.1.2 sha=0", undefined],
    [
      "valkey",
      "v/valkey:9.1.2",
      "valkey-server",
      "Valkey server v=9.0.3 sha=0",
      "the tag says 9.1.2, the image holds Valkey 9.0.3",
    ],
    [
      "haproxy",
      "h/haproxy:3.2.4",
      "haproxy",
      "HAProxy version 2.6.12-1+deb12u3",
      "the tag says 3.2.4, the image holds HAProxy 2.6.12",
    ],
    ["haproxy", "h/haproxy:3.2.4", "haproxy", "HAProxy version 3.2.4-98813a1 2025/08/13", undefined],
    ["exporter", "e/redis_exporter:v1.45.0", "redis_exporter", 'msg="Redis Metrics Exporter v1.45.0 build"', undefined],
    ["aws-cli", "a/aws-cli:2.15.0", "aws", "aws-cli/2.15.0 Python/3.11", undefined],
    ["aws-cli", "a/aws-cli:2.9.19", "aws", "aws-cli/2.9.19 Python/3.11", /older than 2\.15\.0.*Pod Identity/],
    ["valkey", "v/valkey:9.1.2", "valkey-server", "", /no Valkey version/],
  ] as const)("%s %s: %s says %j", (role, ref, name, out, want) => {
    const got = judge(role, ref, name, out);
    if (want === undefined) expect(got).toBeUndefined();
    else if (typeof want === "string") expect(got).toBe(want);
    else expect(got).toMatch(want);
  });
});

describe("the engine's argv", () => {
  it("passes a secret by name only, values of the rest, mounts read-only", () => {
    const argv = runArgs({
      image: "img@sha256:x",
      entrypoint: "sh",
      args: ["-c", "echo"],
      env: { A: "1" },
      passEnv: ["VALKEY_PASSWORD"],
      mounts: [{ host: "/h", path: "/c" }],
      tmpfs: ["/tmp"],
      user: "999:999",
      readOnly: true,
      joinNetworkOf: "pod",
    });
    expect(argv).toEqual([
      "run",
      "--rm",
      "--network",
      "container:pod",
      "--entrypoint",
      "sh",
      "--user",
      "999:999",
      "--read-only",
      "--tmpfs",
      "/tmp",
      "-v",
      "/h:/c:ro",
      "-e",
      "A=1",
      "-e",
      "VALKEY_PASSWORD",
      "img@sha256:x",
      "-c",
      "echo",
    ]);
    expect(runArgs({ image: "i", args: [], name: "n", isolated: true })).toEqual([
      "run",
      "-d",
      "--name",
      "n",
      "--network",
      "none",
      "i",
    ]);
  });
});

describe("podRunSpec", () => {
  const pod = {
    securityContext: { runAsUser: 1000, runAsGroup: 1000 },
    containers: [
      {
        name: "load",
        image: "node:24",
        command: ["node", "/drill/load.mjs"],
        env: [
          { name: "DRILL_MODE", value: "cluster" },
          { name: "VALKEY_PASSWORD", valueFrom: { secretKeyRef: { name: "s", key: "password" } } },
        ],
        securityContext: { readOnlyRootFilesystem: true },
        volumeMounts: [
          { name: "drill", mountPath: "/drill" },
          { name: "tmp", mountPath: "/tmp" },
        ],
      },
    ],
    volumes: [
      { name: "drill", configMap: { name: "load" } },
      { name: "tmp", emptyDir: {} },
    ],
  };

  it("runs the container as the kubelet would: files from the ConfigMap, emptyDir as tmpfs, the Secret by name", () => {
    const dir = mkdtempSync(join(tmpdir(), "pod-run-"));
    const spec = podRunSpec({ pod, configMaps: { load: { "load.mjs": "// x" } }, dir, joinNetworkOf: "p" });
    expect(spec).toEqual({
      image: "node:24",
      entrypoint: "node",
      args: ["/drill/load.mjs"],
      env: { DRILL_MODE: "cluster" },
      passEnv: ["VALKEY_PASSWORD"],
      mounts: [{ host: join(dir, "drill"), path: "/drill" }],
      tmpfs: ["/tmp"],
      user: "1000:1000",
      readOnly: true,
      joinNetworkOf: "p",
    });
    expect(readFileSync(join(dir, "drill", "load.mjs"), "utf8")).toBe("// x");
  });

  it("refuses what it cannot give the container, naming it", () => {
    const dir = mkdtempSync(join(tmpdir(), "pod-run-"));
    expect(() => podRunSpec({ pod, configMaps: {}, dir, joinNetworkOf: "p" })).toThrow("ConfigMap load was not given");
    const secretVolume = { ...pod, volumes: [{ name: "drill", secret: {} }, pod.volumes[1]] };
    expect(() => podRunSpec({ pod: secretVolume as never, configMaps: {}, dir, joinNetworkOf: "p" })).toThrow(
      "volume drill is neither an emptyDir nor a ConfigMap",
    );
    const init = { ...pod, initContainers: [pod.containers[0]!] };
    expect(() => podRunSpec({ pod: init, configMaps: {}, dir, joinNetworkOf: "p" })).toThrow("no init container");
  });
});

describe("pinLines", () => {
  const image = (ref: string, pinKey: string | undefined, ok = true) => ({
    role: "valkey" as const,
    ref,
    keys: ["valkey.image"],
    uses: [],
    ...(pinKey === undefined ? {} : { pinKey: pinKey as "VALKEY_IMAGE" }),
    resolved: { digest: `sha256:${"c".repeat(64)}`, mediaType: "m", platforms: [], pullRef: "p" },
    rows: [{ check: "x", ok, detail: "" }],
  });
  const report = (images: ImagesReport["images"]): ImagesReport => ({
    mode: "cluster",
    engine: "podman",
    requiredPlatform: undefined,
    images,
    live: [],
  });
  it("versions.env lines for its defaults, config commands for a stack's own, none for a failed image", () => {
    expect(
      pinLines(
        report([
          image("v/valkey:9.1.2", "VALKEY_IMAGE"),
          image("e.com/v:1", undefined),
          image("bad:1", undefined, false),
        ]),
      ),
    ).toEqual([
      `VALKEY_IMAGE=v/valkey:9.1.2@sha256:${"c".repeat(64)}`,
      `pulumi config set --path valkey-on-eks:valkey.image e.com/v:1@sha256:${"c".repeat(64)}`,
    ]);
  });
});
