/**
 * Which valkey.conf directives a running member takes live (`CONFIG SET`, no restart) and which
 * need a restart (the RollingRestart step), declared once for every directive our valkey.conf
 * renders (pod/valkey-conf.ts, the local lines of pod/local-conf.ts, and the generated includes).
 * The members' pod-template hash covers only the RESTART part of valkey.conf (`restartFiles`),
 * so a change of LIVE directives alone rolls nothing; the LiveConfig step sets them instead
 * (components/steps/live-config/, core/roll/live-config.ts). Pure.
 *
 * Source: Valkey's `src/config.c` (the `standardConfig static_configs[]` table; a directive
 * flagged IMMUTABLE_CONFIG is refused by CONFIG SET, PROTECTED_CONFIG is refused while
 * `enable-protected-configs` is `no`, the default), read at tag 8.0.1 and at unstable commit
 * 55bbbe0 (2024-10-25) from github:valkey-io/valkey, and 9.1.0's for `io-threads`.
 * tests/pod/conf-directives.test.ts checks every claim against the pinned valkey-server
 * (9.1.2): each LIVE directive is CONFIG SET on a running server, each one we call immutable or
 * protected is refused.
 *
 * sentinel.conf is restart-only as a whole: Sentinel has no CONFIG SET for its `sentinel ...`
 * lines (SENTINEL SET / SENTINEL CONFIG SET change the running state, and Sentinel rewrites its
 * file itself), and its file is written only on a Sentinel's first start (pod/sentinel-start-script.ts).
 */
import { VALKEY_CONF_KEY } from "./member.js";

/** How a changed directive reaches a running member. */
export type Apply = "live" | "restart";

/**
 * What Valkey itself allows: `settable` (MODIFIABLE_CONFIG: CONFIG SET takes it), `immutable`
 * (IMMUTABLE_CONFIG: CONFIG SET refuses it), `protected` (PROTECTED_CONFIG: refused unless
 * `enable-protected-configs`), `not-a-config` (a directive of the file parser, no config at all).
 */
export type ValkeySays = "settable" | "immutable" | "protected" | "not-a-config";

export interface DirectiveClass {
  apply: Apply;
  valkey: ValkeySays;
  /** Why, in one line (the docs table shows it). */
  why: string;
}

const live = (why: string): DirectiveClass => ({ apply: "live", valkey: "settable", why });
const restart = (valkey: ValkeySays, why: string): DirectiveClass => ({ apply: "restart", valkey, why });

/**
 * Every directive our valkey.conf renders (and the includes the start script generates), with how a change reaches a
 * member.
 */
export const CONF_DIRECTIVES = {
  // --- pod/valkey-conf.ts, every member ---
  "port": restart(
    "settable",
    "Valkey can move the listener live, but the container port, probes, Services and NetworkPolicies name it: a live move would leave them on a closed port",
  ),
  "bind": restart(
    "settable",
    "settable, but which addresses listen is part of the pod's contract with its Services and probes; a restart keeps them in step",
  ),
  "protected-mode": live("settable; always `no` (NetworkPolicy and auth guard the port)"),
  "daemonize": restart("immutable", "IMMUTABLE_CONFIG"),
  "logfile": restart("immutable", "IMMUTABLE_CONFIG"),
  "dir": restart(
    "protected",
    "PROTECTED_CONFIG (refused while enable-protected-configs is no); the data volume's mount path",
  ),
  // 8.0.1's config.c: DEBUG_CONFIG | IMMUTABLE_CONFIG; 9.1.0's: DEBUG_CONFIG | MODIFIABLE_CONFIG with
  // updateIOThreads (valkey-io/valkey#2033, in 9.0). Replication mode still accepts older images.
  "io-threads": restart(
    "settable",
    "settable from Valkey 9.0 (valkey-io/valkey#2033) but IMMUTABLE_CONFIG before, and replication mode accepts older images: one classification must hold for every image",
  ),
  "maxmemory": live("settable; lowering it below used memory evicts (or, with noeviction, refuses writes) at once"),
  "maxmemory-policy": live("settable; applies to the next eviction"),
  "appendonly": live(
    "settable; `yes` starts a background AOF rewrite (a fork), `no` stops the AOF; refused while the server is loading",
  ),
  "appendfsync": live("settable; applies to the next fsync"),
  "save": live('settable; the new RDB schedule (`""` disables it) applies at once'),
  "repl-diskless-sync-delay": live("settable; applies to the next full resync a replica asks for"),
  // --- cluster members ---
  "cluster-enabled": restart("immutable", "IMMUTABLE_CONFIG"),
  "cluster-config-file": restart("immutable", "IMMUTABLE_CONFIG; nodes.conf on the data volume"),
  "cluster-node-timeout": live("settable; members differ only for the step's few seconds"),
  "cluster-port": restart("immutable", "IMMUTABLE_CONFIG"),
  "cluster-preferred-endpoint-type": live("settable; the server drops its cached CLUSTER SLOTS reply"),
  "cluster-require-full-coverage": live("settable"),
  // --- replication members ---
  "min-replicas-to-write": live("settable; the primary re-counts its good replicas at once"),
  "min-replicas-max-lag": live("settable; the primary re-counts its good replicas at once"),
  "replica-read-only": live("settable"),
  "replicaof": restart(
    "immutable",
    "IMMUTABLE_CONFIG as a directive; who a member follows is the REPLICAOF command's, decided by Sentinel and the start script, never by the file",
  ),
  "include": restart(
    "not-a-config",
    "a directive of the file parser; the included files are generated at container start",
  ),
  // --- the generated includes (auth.conf), never in the ConfigMap ---
  "requirepass": restart(
    "settable",
    "secret: start.sh writes it from the Secret at container start, never into valkey.conf or a step's inputs; a new one reaches a member only at its next start (nothing rolls for it: rotation is not built)",
  ),
  "masterauth": restart("settable", "secret, as requirepass"),
  // --- the local lines (pod/local-conf.ts), never deployed ---
  "enable-debug-command": restart("immutable", "IMMUTABLE_CONFIG (local processes only)"),
  "bind-source-addr": live("settable (local processes only)"),
} as const satisfies Record<string, DirectiveClass>;

export type ConfDirective = keyof typeof CONF_DIRECTIVES;

/** The class of `key`; throws naming a directive the table does not know (a new renderer line must be classified). */
export function directiveClass(key: string): DirectiveClass {
  const c = (CONF_DIRECTIVES as Record<string, DirectiveClass>)[key];
  if (c === undefined)
    throw new Error(
      `valkey.conf directive '${key}' is not classified as live or restart: add it to CONF_DIRECTIVES in pod/conf-directives.ts`,
    );
  return c;
}

/** One directive line of a conf file: its key (lower case) and its value as CONFIG SET takes it (unquoted). */
export interface ConfLine {
  key: string;
  value: string;
  /** The line as written. */
  text: string;
}

/** The value after the key: one double-quoted string is unquoted (`\\` and `\"`), anything else is taken as written. */
function valueOf(rest: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(rest);
  return m === null ? rest : (m[1] as string).replace(/\\(.)/g, "$1");
}

/** One line parsed: undefined for a comment or a blank line. */
function parseLine(text: string): ConfLine | undefined {
  const line = text.trim();
  if (line === "" || line.startsWith("#")) return undefined;
  const space = line.search(/\s/);
  const key = (space < 0 ? line : line.slice(0, space)).toLowerCase();
  return { key, value: space < 0 ? "" : valueOf(line.slice(space).trim()), text };
}

/** The directive lines of a valkey.conf text, in order (comments and blank lines skipped). */
export function confLines(conf: string): ConfLine[] {
  return conf.split("\n").flatMap((text) => parseLine(text) ?? []);
}

/** Each directive's effective value (the last occurrence wins, as in valkey-server), `include` aside. */
export function effectiveDirectives(conf: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of confLines(conf)) if (l.key !== "include") out.set(l.key, l.value);
  return out;
}

/** The LIVE directives of a conf and their effective values: what the LiveConfig step sets on every member. */
export function liveDirectives(conf: string): Record<string, string> {
  return Object.fromEntries([...effectiveDirectives(conf)].filter(([key]) => directiveClass(key).apply === "live"));
}

/** The conf without its LIVE directive lines: what a restart is needed for (comments and includes stay). */
export function restartPart(conf: string): string {
  return conf
    .split("\n")
    .filter((text) => {
      const l = parseLine(text);
      return l === undefined || directiveClass(l.key).apply === "restart";
    })
    .join("\n");
}

/**
 * A member's files as its pod-template hash sees them: valkey.conf reduced to its RESTART part,
 * every other file (the scripts, sentinel.conf) whole. A change that leaves this unchanged needs
 * no restart.
 */
export function restartFiles(files: Record<string, string>): Record<string, string> {
  const conf = files[VALKEY_CONF_KEY];
  return conf === undefined ? { ...files } : { ...files, [VALKEY_CONF_KEY]: restartPart(conf) };
}
