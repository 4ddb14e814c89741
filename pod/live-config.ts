/**
 * Which valkey.conf directives a change applies LIVE (`CONFIG SET` on every running member, no
 * restart) and which need a rolling restart. One list: the directives this project renders
 * (valkey-conf.ts) that come from the stack config and that `CONFIG SET` accepts on the servers
 * we run (tests/components/live-config-real.test.ts checks every one against the real
 * valkey-server 9.1.2; Valkey's src/config.c flags the immutable ones IMMUTABLE_CONFIG):
 *
 * - live: `io-threads` (modifiable since Valkey 9.0, measured on 9.0.0 and 9.1.2; src/config.c
 *   of late 2024 still had it IMMUTABLE_CONFIG, so an 8.x image refuses it and the LiveConfig
 *   step fails naming it), `maxmemory`, `maxmemory-policy`, `appendonly` (yes starts an AOF
 *   rewrite in the background, no stops the AOF), `appendfsync`, `save`, `min-replicas-to-write`,
 *   `min-replicas-max-lag`, `cluster-node-timeout`;
 * - restart: everything else, among them `cluster-enabled`, `cluster-config-file`,
 *   `cluster-port`, `daemonize`, `logfile` (immutable), and `port`, `bind`,
 *   `dir` (modifiable, but the pod, its probes, Services and volume are built around them: a
 *   change is a new pod), plus the includes (auth, announce: per-pod files the start script
 *   writes).
 *
 * The members' pod template hashes valkey.conf WITHOUT the live lines (restartRelevant), so a
 * change of only live directives rolls nothing; the LiveConfig step sets them on every member.
 * The ConfigMap keeps the whole file: a pod that restarts later starts with the new values. Pure.
 */
import { VALKEY_CONF_KEY } from "./member.js";

export const LIVE_DIRECTIVES = [
  "io-threads",
  "maxmemory",
  "maxmemory-policy",
  "appendonly",
  "appendfsync",
  "save",
  "min-replicas-to-write",
  "min-replicas-max-lag",
  "cluster-node-timeout",
] as const;

export type LiveDirectiveName = (typeof LIVE_DIRECTIVES)[number];

/** A live directive with its value as `CONFIG SET` takes it (quotes removed). */
export interface LiveDirective {
  name: LiveDirectiveName;
  value: string;
}

const LIVE: ReadonlySet<string> = new Set(LIVE_DIRECTIVES);

/** The directive name of a conf line, or undefined for a blank line or a comment. */
function directiveOf(line: string): string | undefined {
  const t = line.trim();
  return t === "" || t.startsWith("#") ? undefined : t.split(/\s+/, 1)[0]?.toLowerCase();
}

/** `"a b"` → `a b`, `""` → empty, a bare word as is (valkey-conf.ts quotes with \\ and \" escapes). */
function unquote(raw: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(raw);
  return m === null ? raw : (m[1] ?? "").replace(/\\(.)/g, "$1");
}

/** The live directives of a valkey.conf text, in file order; throws naming a live directive given twice. */
export function liveDirectives(conf: string): LiveDirective[] {
  const out: LiveDirective[] = [];
  for (const line of conf.split("\n")) {
    const name = directiveOf(line);
    if (name === undefined || !LIVE.has(name)) continue;
    if (out.some((d) => d.name === name)) throw new Error(`valkey.conf: live directive '${name}' appears twice`);
    out.push({ name: name as LiveDirectiveName, value: unquote(line.trim().slice(name.length).trim()) });
  }
  return out;
}

/** valkey.conf without its live directive lines: what a restart depends on. */
export function withoutLiveDirectives(conf: string): string {
  return conf
    .split("\n")
    .filter((line) => !LIVE.has(directiveOf(line) ?? ""))
    .join("\n");
}

/** A member pod's files as its template hash sees them: valkey.conf without the live lines, every other file whole. */
export function restartRelevant(files: Readonly<Record<string, string>>): Record<string, string> {
  const conf = files[VALKEY_CONF_KEY];
  return conf === undefined ? { ...files } : { ...files, [VALKEY_CONF_KEY]: withoutLiveDirectives(conf) };
}
