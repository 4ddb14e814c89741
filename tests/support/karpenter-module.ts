/**
 * The github.com/aws/karpenter-provider-aws Go module at the chart version (versions.env
 * KARPENTER_CHART_VERSION), read from the Go module cache: .ci/karpenter-module.sh prints its
 * directory, downloading it from the Go module proxy when missing, and fails naming `go` when Go
 * is not installed. Parsers for what the tests compare with the program: the AWS APIs the
 * controller calls and the interruption messages it understands.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const SCRIPT = resolve(import.meta.dirname, "../../.ci/karpenter-module.sh");
let cached: string | undefined;

/** The module's directory in the Go module cache (downloaded on first use). */
export function karpenterModuleDir(): string {
  if (cached !== undefined) return cached;
  try {
    cached = execFileSync("bash", [SCRIPT], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 300_000,
    }).trim();
  } catch (err) {
    const stderr = (err as { stderr?: string | Buffer }).stderr?.toString().trim() ?? "";
    throw new Error(
      `the Karpenter Go module is needed (bash .ci/karpenter-module.sh failed): ${stderr || (err as Error).message}`,
      { cause: err },
    );
  }
  return cached;
}

/** Go SDK client interface name in pkg/aws/sdk.go → IAM service prefix. */
export const SDK_INTERFACE_SERVICES: Readonly<Record<string, string>> = {
  EC2API: "ec2",
  IAMAPI: "iam",
  EKSAPI: "eks",
  PricingAPI: "pricing",
  SSMAPI: "ssm",
  SQSAPI: "sqs",
  ARCZonalShiftAPI: "arc-zonal-shift",
  TimestreamWriteAPI: "timestream",
};

/**
 * Every AWS API of the controller's SDK interfaces (pkg/aws/sdk.go) as an IAM action
 * (`<service>:<Method>`). Throws on an interface it has no service prefix for, so a new AWS
 * client in a later Karpenter is not silently skipped.
 */
export function karpenterSdkActions(dir = karpenterModuleDir()): string[] {
  const source = readFileSync(join(dir, "pkg/aws/sdk.go"), "utf8");
  const actions: string[] = [];
  for (const match of source.matchAll(/type (\w+) interface \{([^}]*)\}/g)) {
    const [, name = "", body = ""] = match;
    const service = SDK_INTERFACE_SERVICES[name];
    if (service === undefined)
      throw new Error(`pkg/aws/sdk.go has an interface ${name} with no IAM service prefix in SDK_INTERFACE_SERVICES`);
    for (const method of body.matchAll(/^\s*(\w+)\(/gm)) actions.push(`${service}:${method[1]}`);
  }
  if (actions.length === 0) throw new Error(`no SDK interfaces found in ${dir}/pkg/aws/sdk.go`);
  return actions.sort();
}

/**
 * The `{ source, detail-type }` of every EventBridge message the controller parses: one per
 * messages/<kind>/parser.go (kinds without a parser, such as instancestatus, come from polling
 * DescribeInstanceStatus, not from the queue).
 */
export function karpenterInterruptionEvents(
  dir = karpenterModuleDir(),
): Array<{ kind: string; source: string; detailType: string }> {
  const root = join(dir, "pkg/controllers/interruption/messages");
  const events = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory() || !existsSync(join(root, entry.name, "parser.go"))) continue;
    const source = readFileSync(join(root, entry.name, "parser.go"), "utf8");
    const ret = (fn: string) =>
      new RegExp(`func \\(p Parser\\) ${fn}\\(\\) string \\{\\s*return "([^"]+)"`).exec(source)?.[1];
    const src = ret("Source");
    const detailType = ret("DetailType");
    if (src === undefined || detailType === undefined)
      throw new Error(`${entry.name}/parser.go: no Source()/DetailType() returning a string literal`);
    events.push({ kind: entry.name, source: src, detailType });
  }
  if (events.length === 0) throw new Error(`no interruption message parsers under ${root}`);
  return events.sort((a, b) => a.kind.localeCompare(b.kind));
}

/**
 * The Kubernetes minors Karpenter supports at `appVersion` (e.g. "1.14"), from
 * hack/docs/compatibilitymatrix_gen/compatibility.yaml.
 */
export function karpenterKubernetesRange(appMinor: string, dir = karpenterModuleDir()): { min: string; max: string } {
  const file = join(dir, "hack/docs/compatibilitymatrix_gen/compatibility.yaml");
  const text = readFileSync(file, "utf8");
  const entry = new RegExp(
    `appVersion: ${appMinor.replace(".", "\\.")}\\.x\\s+minK8sVersion: (\\S+)\\s+maxK8sVersion: (\\S+)`,
  ).exec(text);
  if (!entry?.[1] || !entry[2]) throw new Error(`${file} has no entry for Karpenter ${appMinor}.x`);
  return { min: entry[1], max: entry[2] };
}
