/**
 * Pulumi mocks that record every resource the program registers and throw on any invoke a
 * test did not expect (so a component cannot quietly start calling AWS). Import this module
 * and call `installMocks()` BEFORE importing the components under test (Pulumi reads the
 * mock monitor when resources are constructed).
 */
import * as pulumi from "@pulumi/pulumi";
import * as settings from "@pulumi/pulumi/runtime/settings.js";

export interface RecordedResource {
  /** Type token, e.g. "kubernetes:apps/v1:StatefulSet". */
  type: string;
  /** Logical name. */
  name: string;
  /** Inputs with secret values unwrapped to plain values. */
  inputs: Record<string, unknown>;
  /** The same inputs with every secret value replaced by "[secret]": what a plain-text leak check reads. */
  redacted: Record<string, unknown>;
  /** Provider reference string, when one was passed. */
  provider: string | undefined;
  /**
   * Provider references by package sent with a component's registration (`opts.providers`): what a
   * multi-language component (awsx, pulumi-eks) hands to the resources it creates.
   */
  providers?: Record<string, string>;
}

/** One invoke a test expected: its token, inputs and the provider reference it went to. */
export interface RecordedInvoke {
  token: string;
  inputs: Record<string, unknown>;
  provider: string | undefined;
}

export interface MockRecorder {
  readonly resources: RecordedResource[];
  /** Every resource of a type. */
  ofType(type: string): RecordedResource[];
  /** The one resource with this type and logical name; throws naming what exists otherwise. */
  get(type: string, name: string): RecordedResource;
  /** Invoke tokens that were called (all of them were expected ones). */
  readonly calls: string[];
  /** The same invokes with their inputs and provider. */
  readonly invokes: RecordedInvoke[];
  reset(): void;
}

export interface MockOptions {
  /** Invoke results by token; any other invoke throws. */
  invokes?: Record<string, (inputs: Record<string, unknown>) => Record<string, unknown>>;
  /** Extra outputs for a resource beyond its inputs (e.g. a generated `arn`). */
  outputs?: (r: RecordedResource) => Record<string, unknown>;
  project?: string;
  stack?: string;
}

/** The mock monitor's marker for a secret value: `{ [SECRET_SIG]: SECRET_VALUE, value }`. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

function mapSecrets(v: unknown, onSecret: (value: unknown) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => mapSecrets(x, onSecret));
  if (v !== null && typeof v === "object") {
    const obj = v as Record<string, unknown>;
    if (SECRET_SIG in obj) return onSecret(mapSecrets(obj.value, onSecret));
    return Object.fromEntries(Object.entries(obj).map(([k, x]) => [k, mapSecrets(x, onSecret)]));
  }
  return v;
}

export function installMocks(o: MockOptions = {}): MockRecorder {
  const resources: RecordedResource[] = [];
  const calls: string[] = [];
  const invokes: RecordedInvoke[] = [];
  const providerMaps = new Map<string, Record<string, string>>();
  const recorder: MockRecorder = {
    resources,
    calls,
    invokes,
    ofType: (type) => resources.filter((r) => r.type === type),
    get: (type, name) => {
      const found = resources.find((r) => r.type === type && r.name === name);
      if (!found) {
        const names = resources.filter((r) => r.type === type).map((r) => r.name);
        throw new Error(`no ${type} named ${name} (have: ${names.join(", ") || "none of that type"})`);
      }
      return found;
    },
    reset: () => {
      resources.length = 0;
      calls.length = 0;
      invokes.length = 0;
    },
  };
  void pulumi.runtime.setMocks(
    {
      newResource(args: pulumi.runtime.MockResourceArgs): { id: string; state: Record<string, unknown> } {
        const rec: RecordedResource = {
          type: args.type,
          name: args.name,
          inputs: mapSecrets(args.inputs, (x) => x) as Record<string, unknown>,
          redacted: mapSecrets(args.inputs, () => "[secret]") as Record<string, unknown>,
          provider: args.provider,
          providers: providerMaps.get(`${args.type}::${args.name}`) ?? {},
        };
        resources.push(rec);
        const extra = o.outputs?.(rec) ?? {};
        return { id: `${args.name}-id`, state: { ...(args.inputs as Record<string, unknown>), ...extra } };
      },
      call(args: pulumi.runtime.MockCallArgs): Record<string, unknown> {
        const handler = o.invokes?.[args.token];
        if (handler === undefined) throw new Error(`unexpected invoke ${args.token} (${JSON.stringify(args.inputs)})`);
        calls.push(args.token);
        invokes.push({ token: args.token, inputs: args.inputs as Record<string, unknown>, provider: args.provider });
        return handler(args.inputs as Record<string, unknown>);
      },
    },
    o.project ?? "valkey-on-eks",
    o.stack ?? "test",
    false,
  );
  // The mock API hands newResource no providers map: read it off the registration request.
  type ProvidersRequest = { getType(): string; getName(): string; getProvidersMap(): { toArray(): Array<[string, string]> } };
  const monitor = settings.getMonitor() as unknown as { registerResource(req: ProvidersRequest, cb: unknown): unknown };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) => {
    providerMaps.set(`${req.getType()}::${req.getName()}`, Object.fromEntries(req.getProvidersMap().toArray()));
    return register(req, cb);
  };
  return recorder;
}

/** Resolves an Output's value in a mocked program (unknowns resolve to undefined). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

/** Whether an Output is marked secret. */
export function isSecretOutput(output: pulumi.Output<unknown>): Promise<boolean> {
  return pulumi.isSecret(output);
}

/** Waits until every resource registration issued so far has reached the mock monitor. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

export const MOCK_ACCOUNT = "123456789012";
export const MOCK_KUBECONFIG = JSON.stringify({ apiVersion: "v1", kind: "Config", clusters: [] });

/**
 * Outputs AWS would compute that the components read (ARNs, ids, the EKS kubeconfig), so
 * apply() callbacks see realistic values under mocks.
 */
export function awsMockOutputs(r: RecordedResource): Record<string, unknown> {
  switch (r.type) {
    case "awsx:ec2:Vpc":
      return { vpcId: "vpc-1", privateSubnetIds: ["subnet-p1", "subnet-p2", "subnet-p3"], publicSubnetIds: ["subnet-u1", "subnet-u2", "subnet-u3"] };
    case "eks:index:Cluster":
      return { kubeconfigJson: MOCK_KUBECONFIG, clusterSecurityGroupId: "sg-cluster" };
    case "aws:iam/role:Role":
      return { arn: `arn:aws:iam::${MOCK_ACCOUNT}:role/${r.name}`, name: r.name };
    case "aws:sqs/queue:Queue":
      return { arn: `arn:aws:sqs:us-west-2:${MOCK_ACCOUNT}:${String(r.inputs.name)}`, url: `https://sqs.us-west-2.amazonaws.com/${MOCK_ACCOUNT}/${String(r.inputs.name)}` };
    case "aws:cloudwatch/eventRule:EventRule":
      return { name: r.name };
    default:
      return {};
  }
}
