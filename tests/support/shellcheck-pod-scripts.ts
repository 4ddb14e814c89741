/**
 * shellcheck over every shell script a pod runs, as rendered (part of `npm run lint`):
 *
 *   tsx tests/support/shellcheck-pod-scripts.ts
 *
 * The shell files themselves (pod/scripts/*.sh, pod/shell-file.ts) are checked as they are in the
 * tree too, with no ACCEPTED entry: each waiver they need is a `# shellcheck disable` line in the
 * file saying why. Then, as for every script, their renders.
 *
 * Renders each script the way the manifests do (pod/cluster-member.ts, pod/replication-member.ts,
 * pod/sentinel.ts on the embedded default stack config; restore.sh and backup.sh as their
 * ConfigMaps hold them; the fault agent; the benchmark Job's script), for both modes and every
 * option that changes a script's text (auth, restore, the background scripts, the zone file, the
 * client pods), writes each distinct text once to a temporary directory and runs
 * `shellcheck -s sh -f gcc` on them. Any finding fails, naming the script and its option sets,
 * unless ACCEPTED below names its script, its code and its line, with the reason. Needs shellcheck
 * on PATH (`.ci/setup` installs Debian's).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildBenchmarkScript } from "../../components/benchmark/job-script.js";
import { restoreScriptFiles } from "../../components/valkey/restore-init.js";
import { parseStackConfig } from "../../config/schema.js";
import { renderAzFailbackScript } from "../../pod/az-failback-script.js";
import { renderBackupScript } from "../../pod/backup-script.js";
import { BACKGROUND_SCRIPTS, clusterMemberPod } from "../../pod/cluster-member.js";
import { faultAgentScript } from "../../pod/fault-agent-script.js";
import { replicationMemberPod } from "../../pod/replication-member.js";
import { DEFAULT_MASTER_NAME } from "../../pod/replication-start.js";
import { sentinelPod } from "../../pod/sentinel.js";
import { SHELL_DIR, shellFile } from "../../pod/shell-file.js";
import { renderStartScript } from "../../pod/start-script.js";
import { SEED_WORKLOAD } from "../../vocabulary/workload.js";

/** One rendered script: its file name in the pod, the option set it was rendered with, its text. */
export interface PodScript {
  script: string;
  variant: string;
  text: string;
}

/** The files of a pod definition that are shell scripts (valkey.conf and sentinel.conf are not). */
function shellFiles(files: Record<string, string>, variant: string): PodScript[] {
  return Object.entries(files)
    .filter(([name]) => name.endsWith(".sh"))
    .map(([script, text]) => ({ script, variant, text }));
}

/** Every shell script a pod runs, for both modes and each option set that changes its text. */
export function renderedPodScripts(): PodScript[] {
  const scripts: PodScript[] = [];
  const clusterConfig = parseStackConfig({ valkey: { mode: "cluster" } }).config.valkey;
  const replicationConfig = parseStackConfig({}).config.valkey;
  const sentinels = [
    "valkey-sentinel-0.valkey-sentinel.valkey.svc:26379",
    "valkey-sentinel-1.valkey-sentinel.valkey.svc:26379",
  ];
  for (const auth of [true, false]) {
    for (const restore of [false, true]) {
      const v = `auth=${auth} restore=${restore}`;
      scripts.push(...shellFiles(clusterMemberPod({ valkey: clusterConfig, auth, restore }).files, `cluster ${v}`));
      scripts.push(
        ...shellFiles(
          clusterMemberPod({ valkey: clusterConfig, auth, restore, background: [] }).files,
          `cluster ${v} background=none`,
        ),
      );
      for (const b of BACKGROUND_SCRIPTS) {
        const background = BACKGROUND_SCRIPTS.filter((x) => x !== b);
        scripts.push(
          ...shellFiles(
            clusterMemberPod({ valkey: clusterConfig, auth, restore, background }).files,
            `cluster ${v} background=${background.join(",")}`,
          ),
        );
      }
      const member = replicationMemberPod({
        valkey: replicationConfig,
        auth,
        restore,
        masterName: DEFAULT_MASTER_NAME,
        sentinels,
      });
      scripts.push(...shellFiles(member.files, `replication ${v}`));
    }
    const s = replicationConfig.replication.sentinel;
    const sentinel = sentinelPod({
      auth,
      masterName: DEFAULT_MASTER_NAME,
      primary: { host: "valkey-0.valkey.valkey.svc", port: 6379 },
      quorum: s.quorum,
      downAfterMs: s.downAfterMilliseconds,
      failoverTimeoutMs: s.failoverTimeoutMs,
      parallelSyncs: s.parallelSyncs,
      hostnames: true,
    });
    scripts.push(...shellFiles(sentinel.files, `sentinel auth=${auth}`));
    scripts.push({
      script: "start.sh",
      variant: `replication auth=${auth} sentinel=none`,
      text: renderStartScript({ mode: "replication", auth }),
    });
  }
  scripts.push({ script: "failback.sh", variant: "cluster zoneFile=none", text: renderAzFailbackScript() });
  for (const [mode, primaries] of [
    ["cluster", clusterConfig.cluster.primaries],
    ["replication", 1],
  ] as const) {
    scripts.push(...shellFiles(restoreScriptFiles(mode, primaries), `${mode} primaries=${primaries}`));
    for (const clientPods of [1, 2]) {
      const target = {
        host: mode === "cluster" ? "valkey-cluster.valkey.svc" : "valkey-primary.valkey.svc",
        port: 6379,
      };
      const text = buildBenchmarkScript({ workload: SEED_WORKLOAD, mode, target, clientPods });
      scripts.push({ script: "benchmark-job.sh", variant: `${mode} clientPods=${clientPods}`, text });
    }
  }
  scripts.push({ script: "backup.sh", variant: "default", text: renderBackupScript() });
  for (const file of readdirSync(SHELL_DIR)
    .filter((f) => f.endsWith(".sh"))
    .sort())
    scripts.push({ script: `pod/scripts/${file}`, variant: "the file in the tree", text: shellFile(file) });
  // Run as `sh -c` (components/steps/failure-drill/fault-agent.ts): no shebang of its own.
  scripts.push({ script: "fault-agent.sh", variant: "default", text: faultAgentScript() });
  return scripts;
}

/**
 * Findings accepted in the scripts still rendered from TypeScript strings, each with why; any
 * other finding fails. They were accepted here, not rewritten, while a new script text replaced
 * the release's ConfigMap (deleted, then created); the providers now update it in place
 * (components/kubernetes/provider-args.ts), so a script moved to pod/scripts/ takes its waivers
 * inline or is fixed, and its entries leave this table. `line` is a fragment of the flagged line,
 * so the same construct elsewhere still fails.
 */
export const ACCEPTED: readonly { script: string; code: string; line: string; why: string }[] = [
  ...["restore.sh", "backup.sh"].map((script) => ({
    script,
    code: "SC2154",
    line: "local_cli() {",
    why: "the shared cli helpers define local_cli, which this script never calls (so it sets neither variable)",
  })),
];

/** The ACCEPTED entry a finding on `text` of `script` matches, if any. */
export function acceptedFinding(script: string, code: string, text: string): (typeof ACCEPTED)[number] | undefined {
  return ACCEPTED.find((a) => a.script === script && a.code === code && text.includes(a.line));
}

export interface ShellcheckResult {
  /** Script/variant pairs checked, and how many distinct texts they render to. */
  variants: number;
  distinct: number;
  /** One line per finding: `<script> [<option set>…]:<line>:<col>: <level>: <message> [SCxxxx]`. */
  findings: string[];
  /** Findings ACCEPTED names (counted once per distinct text). */
  accepted: number;
  /** ACCEPTED entries no finding matched: stale, to be removed. */
  unused: string[];
}

/** Why shellcheck cannot run here, or undefined when it can. */
export function shellcheckMissing(): string | undefined {
  const r = spawnSync("shellcheck", ["--version"], { encoding: "utf8" });
  if (r.error === undefined && r.status === 0) return undefined;
  return "shellcheck is not installed: run through `bash .ci/setup` (e.g. `bash .ci/setup npm run lint`), which installs Debian's shellcheck";
}

/** Runs `shellcheck -s sh -f gcc` on each distinct text of `scripts` (in a temp dir, removed after). */
export function shellcheckScripts(scripts: readonly PodScript[]): ShellcheckResult {
  const missing = shellcheckMissing();
  if (missing !== undefined) throw new Error(missing);
  const byText = new Map<string, PodScript[]>();
  for (const s of scripts) byText.set(s.text, [...(byText.get(s.text) ?? []), s]);
  const dir = mkdtempSync(join(tmpdir(), "shellcheck-pod-scripts-"));
  try {
    const names = new Map<string, PodScript[]>();
    let i = 0;
    for (const [text, same] of byText) {
      const file = join(dir, `${String(i++).padStart(3, "0")}-${(same[0]?.script ?? "script").replace(/\//g, "_")}`);
      writeFileSync(file, text);
      names.set(file, same);
    }
    const r = spawnSync("shellcheck", ["-s", "sh", "-f", "gcc", ...names.keys()], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error !== undefined) throw r.error;
    const findings: string[] = [];
    let accepted = 0;
    const used = new Set<(typeof ACCEPTED)[number]>();
    for (const line of r.stdout.split("\n")) {
      if (line === "") continue;
      const file = [...names.keys()].find((f) => line.startsWith(`${f}:`));
      const same = file === undefined ? undefined : names.get(file);
      if (file === undefined || same === undefined) {
        findings.push(line);
        continue;
      }
      const at = /^:(\d+):\d+: \w+: .*\[(SC\d+)\]$/.exec(line.slice(file.length));
      const flagged = at === null ? undefined : same[0]?.text.split("\n")[Number(at[1]) - 1];
      const entry =
        at === null || flagged === undefined ? undefined : acceptedFinding(same[0]?.script ?? "", at[2] ?? "", flagged);
      if (entry !== undefined) {
        accepted++;
        used.add(entry);
        continue;
      }
      const others = same.length > 1 ? ` and ${same.length - 1} more option set(s) rendering the same text` : "";
      findings.push(`${same[0]?.script} [${same[0]?.variant}${others}]${line.slice(file.length)}`);
    }
    if (r.status !== 0 && findings.length === 0 && accepted === 0)
      throw new Error(`shellcheck exited ${r.status}: ${r.stderr.trim()}`);
    const unused = ACCEPTED.filter((a) => !used.has(a)).map((a) => `${a.script} ${a.code} "${a.line}"`);
    return { variants: scripts.length, distinct: byText.size, findings, accepted, unused };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const missing = shellcheckMissing();
  if (missing !== undefined) {
    console.error(`shellcheck-pod-scripts: ${missing}`);
    process.exit(2);
  }
  const scripts = renderedPodScripts();
  const r = shellcheckScripts(scripts);
  const kinds = new Set(scripts.map((s) => s.script)).size;
  for (const f of r.findings) console.error(f);
  for (const u of r.unused) console.error(`stale ACCEPTED entry (no finding matches it any more; remove it): ${u}`);
  if (r.unused.length > 0 && r.findings.length === 0) process.exit(1);
  if (r.findings.length > 0) {
    console.error(
      `shellcheck-pod-scripts: ${r.findings.length} finding(s) in the rendered pod scripts (${kinds} scripts, ${r.variants} variants, ${r.distinct} distinct texts)`,
    );
    process.exit(1);
  }
  console.log(
    `shellcheck-pod-scripts: ${kinds} scripts, ${r.variants} variants (${r.distinct} distinct texts): clean (${r.accepted} accepted finding(s), each named with why in ACCEPTED)`,
  );
}
