/**
 * The whole stack config: the section schemas (sections.ts), the cross-field rules (rules.ts)
 * and the resolution to {@link StackConfig} (resolve.ts), parsed once at
 * the boundary. Every problem is collected into one {@link ConfigError} whose message lists them
 * as `key.path: message` lines, paths relative to the `valkey-on-eks:` namespace.
 *
 * Shape problems (types, ranges, unknown keys) are reported first; the cross-field rules need a
 * well-formed config, so they run on the config with the malformed values removed, and their
 * problems follow in the same error.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { beyondMeasuredScale } from "../vocabulary/measured-scale.js";
import { repeatOrDefault, type Workload } from "../vocabulary/workload.js";
import { knownKeysAt } from "./meta.js";
import { resolveStackConfig, stackResolver } from "./resolve.js";
import { checkStackRules } from "./rules.js";
import { PROJECT, stackInputSchema } from "./sections.js";
import type { PasswordState, StackConfig, StackInput } from "./types.js";

/** One problem in a stack config. */
export interface ConfigIssue {
  /** Dotted key path below the project namespace, e.g. "valkey.cluster.primaries"; "password" for the password. */
  path: string;
  message: string;
}

/** Every problem of a stack config, one `path: message` line each. */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super(
      [
        `invalid stack config (${issues.length} problem${issues.length === 1 ? "" : "s"}):`,
        ...issues.map((i) => `  ${i.path}: ${i.message}`),
      ].join("\n"),
    );
    this.name = "ConfigError";
    this.issues = issues;
  }
}

export interface ParseOptions {
  /**
   * Treat a missing password (with valkey.auth.enabled) as an error, as `pulumi up` must; offline
   * validation (`vbench config`) leaves it false and gets a warning instead.
   * @default false
   */
  requirePassword?: boolean;
}

export interface ParsedStackConfig {
  config: StackConfig;
  password: PasswordState;
  /** Problems that do not stop the config from being valid, e.g. a password still to be set. */
  warnings: ConfigIssue[];
}

/** Whether the raw password key is a Pulumi secret, plain text, or absent; never its value. */
export function passwordState(password: StackInput["password"]): PasswordState {
  if (password === undefined) return "missing";
  return typeof password === "string" ? "plaintext" : "secret";
}

const SET_PASSWORD = "run `pulumi config set --secret password <value>`";

/** The whole schema: sections, then cross-field rules and password rules, then the resolved config. */
export function stackConfigSchema(options: ParseOptions = {}) {
  return stackInputSchema
    .superRefine(
      (input, ctx) => {
        checkStackRules(resolveStackConfig(input), input, (path, message) =>
          ctx.addIssue({ code: "custom", path: [...path], message }),
        );
        const state = passwordState(input.password);
        if (state === "plaintext") {
          ctx.addIssue({
            code: "custom",
            path: ["password"],
            message: `${PROJECT}:password is stored in plain text in the stack file; remove it and ${SET_PASSWORD}`,
          });
        } else if (state === "missing" && input.valkey.auth.enabled && options.requirePassword) {
          ctx.addIssue({
            code: "custom",
            path: ["password"],
            message: `required while valkey.auth.enabled is true; ${SET_PASSWORD}`,
          });
        }
      },
      { when: (payload) => payload.issues.length === 0 },
    )
    .pipe(stackResolver);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

const EXPECTED: Readonly<Record<string, string>> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  object: "a map",
  array: "a list",
};

/** Friendlier messages for zod's built-in issues. */
const errorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type": {
      const input = issue.input;
      const got =
        input === null
          ? "null"
          : Array.isArray(input)
            ? "a list"
            : typeof input === "object"
              ? "a map"
              : JSON.stringify(input);
      return input === undefined
        ? `is required (${EXPECTED[issue.expected] ?? issue.expected})`
        : `must be ${EXPECTED[issue.expected] ?? issue.expected} (got ${got})`;
    }
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "array") return `must list at least ${plural(min, "item")}`;
      if (issue.origin === "string") return "must not be empty";
      return `must be ${issue.inclusive ? "≥" : ">"} ${min} (got ${String(issue.input)})`;
    }
    case "too_big":
      return issue.origin === "array" || issue.origin === "string"
        ? undefined
        : `must be ${issue.inclusive ? "≤" : "<"} ${String(issue.maximum)} (got ${String(issue.input)})`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")} (got ${JSON.stringify(issue.input)})`;
    case "invalid_key": {
      // A record's key: say why (the key schema's own message), not zod's "Invalid key in record".
      const why = (issue.issues ?? []).map((i) => i.message).filter((m) => m !== "");
      return why.length === 0 ? "is not a valid key" : `is not a valid key: ${why.join("; ")}`;
    }
    default:
      return undefined;
  }
};

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

function unknownKeyMessage(key: string, known: string[], topLevel: boolean): string {
  const name = (k: string) => (topLevel && !k.includes(":") ? `${PROJECT}:${k}` : k);
  // `valkey-on-eks:valkey-on-eks:platform` in a stack file: one prefix stripped, the other left in the key.
  if (topLevel && key.startsWith(`${PROJECT}:`)) {
    const rest = key.slice(PROJECT.length + 1);
    const then = known.includes(rest) ? `did you mean ${name(rest)}?` : unknownKeyMessage(rest, known, true);
    return `unknown key ${PROJECT}:${key}: the ${PROJECT}: prefix is written twice (${then})`;
  }
  const best = known.map((k) => [k, editDistance(key, k)] as const).sort((x, y) => x[1] - y[1])[0];
  const hint =
    best && best[1] <= Math.max(1, Math.floor(key.length / 3))
      ? ` (did you mean ${name(best[0])}?)`
      : ` (known keys: ${known.map(name).join(", ")})`;
  return `unknown key ${name(key)}${hint}`;
}

/** Flattens zod issues into `path: message` issues; one issue per unknown key. */
export function toConfigIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      const known = knownKeysAt(stackInputSchema, issue.path);
      return issue.keys.map((key) => ({
        path: [...path, key].join("."),
        message: unknownKeyMessage(key, known, path.length === 0),
      }));
    }
    return [{ path: path.join(".") || "(root)", message: issue.message }];
  });
}

function warningsFor(raw: Record<string, unknown>, config: StackConfig, password: PasswordState): ConfigIssue[] {
  const warnings: ConfigIssue[] = [];
  if (config.valkey.auth.enabled && password === "missing") {
    warnings.push({
      path: "password",
      message: `not set yet; \`pulumi up\` needs it while valkey.auth.enabled is true (${SET_PASSWORD})`,
    });
  }
  if (!config.valkey.auth.enabled && password !== "missing")
    warnings.push({ path: "password", message: "is ignored: valkey.auth.enabled is false" });
  if (config.platform === "byo" && raw.eks !== undefined)
    warnings.push({ path: "eks", message: "is ignored on platform byo" });
  if (config.platform === "eks" && raw.byo !== undefined)
    warnings.push({ path: "byo", message: "is ignored on platform eks" });
  const { primaries, replicasPerPrimary } = config.valkey.cluster;
  const beyond = config.valkey.mode === "cluster" ? beyondMeasuredScale(primaries, replicasPerPrimary) : undefined;
  if (beyond !== undefined) warnings.push({ path: "valkey.cluster.primaries", message: beyond });
  return warnings;
}

/** A deep copy of `value` without the values at `paths` (so their defaults apply instead). */
function withoutPaths(value: unknown, paths: readonly (readonly PropertyKey[])[]): unknown {
  const copy: unknown = structuredClone(value);
  const at = (path: readonly PropertyKey[]): unknown =>
    path.reduce<unknown>(
      (node, key) =>
        node !== null && typeof node === "object" ? (node as Record<PropertyKey, unknown>)[key] : undefined,
      copy,
    );
  for (let path of paths) {
    // A bad list item drops the whole list (a hole would be a new problem of its own).
    while (path.length > 0 && Array.isArray(at(path.slice(0, -1)))) path = path.slice(0, -1);
    if (path.length === 0) return {};
    const parent = at(path.slice(0, -1));
    if (parent !== null && typeof parent === "object")
      delete (parent as Record<PropertyKey, unknown>)[path[path.length - 1] as PropertyKey];
  }
  return copy;
}

/**
 * The cross-field rules only run on a well-formed config, so a config with shape problems would
 * hide its cross-field problems until the next run. To report everything in one error, the
 * rules are run once more with every malformed value removed (its default standing in), and
 * their problems on keys not already reported are added.
 */
function crossFieldIssuesDespite(
  schema: ReturnType<typeof stackConfigSchema>,
  source: unknown,
  issues: readonly z.core.$ZodIssue[],
  reported: readonly ConfigIssue[],
): ConfigIssue[] {
  const paths = issues.flatMap((i) => (i.code === "unrecognized_keys" ? i.keys.map((k) => [...i.path, k]) : [i.path]));
  const retry = schema.safeParse(withoutPaths(source, paths), { error: errorMap });
  if (retry.success) return [];
  const seen = new Set(reported.map((i) => i.path));
  const overlaps = (path: string): boolean =>
    [...seen].some((p) => p === path || p.startsWith(`${path}.`) || path.startsWith(`${p}.`));
  return toConfigIssues(retry.error.issues).filter((i) => !overlaps(i.path));
}

/**
 * Parses a stack's config: `raw` holds the `valkey-on-eks:` keys with the prefix stripped, plus
 * Pulumi's `aws:region` under the key "aws:region" when set.
 * @throws ConfigError listing every problem.
 */
export function parseStackConfig(raw: unknown, options: ParseOptions = {}): ParsedStackConfig {
  const source = raw ?? {};
  const schema = stackConfigSchema(options);
  const result = schema.safeParse(source, { error: errorMap });
  if (!result.success) {
    const shape = toConfigIssues(result.error.issues);
    throw new ConfigError([...shape, ...crossFieldIssuesDespite(schema, source, result.error.issues, shape)]);
  }
  const rawRecord = source as Record<string, unknown>;
  const password = passwordState(rawRecord.password as StackInput["password"]);
  return { config: result.data, password, warnings: warningsFor(rawRecord, result.data, password) };
}

/** The benchmark workload a stack runs. */
export function workloadFromConfig(config: StackConfig): Workload {
  const {
    enabled: _enabled,
    workloadName,
    resources: _resources,
    resourceAmounts: _amounts,
    clientPods: _clientPods,
    runId: _runId,
    mixImage: _mixImage,
    loadgenImage: _loadgenImage,
    tests,
    repeat,
    ...settings
  } = config.benchmark;
  return {
    name: workloadName,
    ...settings,
    tests: [...tests],
    repeat: repeatOrDefault(repeat, settings.soak !== undefined),
  };
}

/** A stack file that cannot be read or is not a Pulumi stack file at all (as opposed to invalid config). */
export class StackFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StackFileError";
  }
}

export interface LoadedStackFile extends ParsedStackConfig {
  /** The stack name from `Pulumi.<stack>.yaml`, or undefined for another file name. */
  stack: string | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * AWS provider keys the stack's explicit AWS provider (stacks/preflight.ts) does not read: set,
 * they would look in force while the stack deployed, and fetched cluster tokens, as someone else.
 */
const IGNORED_AWS_KEYS: Readonly<Record<string, string>> = Object.fromEntries(
  [
    [["aws:profile"], `set ${PROJECT}:aws.profile (the kubeconfig uses it too)`] as const,
    [["aws:assumeRole", "aws:assumeRoles"], `set ${PROJECT}:aws.roleArn (the kubeconfig assumes it too)`] as const,
    [
      ["aws:accessKey", "aws:secretKey", "aws:token", "aws:sharedCredentialsFiles"],
      `use a profile (${PROJECT}:aws.profile) or the AWS_* environment variables`,
    ] as const,
  ].flatMap(([keys, fix]): Array<[string, string]> =>
    keys.map((key) => [key, `is not read by the stack's AWS provider; ${fix}`]),
  ),
);

/**
 * Splits a Pulumi stack file's `config:` map into parseStackConfig's raw input: `valkey-on-eks:`
 * keys without the prefix, plus `aws:region`. AWS credential keys the stack's own provider ignores
 * ({@link IGNORED_AWS_KEYS}) are issues; other providers' keys are left alone; a key
 * without a namespace is an issue (Pulumi rejects it too).
 */
export function rawFromPulumiConfig(config: Record<string, unknown>): {
  raw: Record<string, unknown>;
  issues: ConfigIssue[];
} {
  const raw: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (key.startsWith(`${PROJECT}:`)) raw[key.slice(PROJECT.length + 1)] = value;
    else if (key === "aws:region") raw[key] = value;
    else if (IGNORED_AWS_KEYS[key] !== undefined) issues.push({ path: key, message: IGNORED_AWS_KEYS[key] });
    else if (!key.includes(":"))
      issues.push({ path: key, message: `config keys must be namespaced; did you mean ${PROJECT}:${key}?` });
  }
  return { raw, issues };
}

/**
 * Reads and parses a Pulumi stack file (`Pulumi.<stack>.yaml`).
 * @throws StackFileError when the file is missing, unreadable or not YAML; ConfigError for invalid config.
 */
export function loadStackFile(path: string, options: ParseOptions = {}): LoadedStackFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StackFileError(
      code === "ENOENT" ? `${path}: no such file` : `${path}: cannot read (${(err as Error).message})`,
    );
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (err) {
    throw new StackFileError(`${path}: not valid YAML: ${(err as Error).message.split("\n")[0] ?? ""}`);
  }
  document ??= {};
  if (!isRecord(document))
    throw new StackFileError(`${path}: expected a Pulumi stack file (a YAML map with a 'config' key)`);
  const config = document.config ?? {};
  if (!isRecord(config)) throw new StackFileError(`${path}: 'config' must be a map of ${PROJECT}:<key> entries`);
  const { raw, issues } = rawFromPulumiConfig(config);
  const stack = /^Pulumi\.(.+)\.ya?ml$/.exec(basename(path))?.[1];
  try {
    const parsed = parseStackConfig(raw, options);
    if (issues.length > 0) throw new ConfigError(issues);
    return { ...parsed, stack };
  } catch (err) {
    if (err instanceof ConfigError && issues.length > 0 && err.issues !== issues)
      throw new ConfigError([...issues, ...err.issues]);
    throw err;
  }
}
