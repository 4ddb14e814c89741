/**
 * Pulumi mocks that record every resource the program registers and throw on any invoke the
 * caller did not expect (so a component cannot quietly start calling AWS). Used by the program
 * perf script (apps/perf/program-perf.ts) and, through tests/support/pulumi-mocks.ts, by the Pulumi-mock
 * tests. Call `installMocks()` BEFORE importing the components (Pulumi reads the mock monitor
 * when resources are constructed).
 *
 * Parent and dependencies. The mock's `newResource` is not told a resource's parent or
 * dependencies, and the mock monitor of @pulumi/pulumi 3.270 does not run resource transforms
 * (registerResourceTransform), which are the engine's job. Both are in the registration request
 * the SDK sends to the monitor, so installMocks wraps the mock monitor's `registerResource` and
 * reads them there: `parent` is what `opts.parent` resolved to, `dependencies` every resource
 * the registration waits for (the SDK expands a component in `dependsOn` to its custom children,
 * and adds the resources the inputs come from), `dependsOn` those not explained by an input.
 */
import * as pulumi from "@pulumi/pulumi";
import { pinnedVersions } from "../../components/steps/addon-pins/implementation.js";

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
  providers: Record<string, string>;
  /** Logical name of the parent resource (`opts.parent`); undefined for a top-level resource. */
  parent: string | undefined;
  /** URN of the parent resource, when there is one. */
  parentUrn: string | undefined;
  /** Logical names of every resource this one's registration waits for (options and inputs). */
  dependencies: string[];
  /** Logical names of the dependencies that come from resource options (`dependsOn`), not from an input. */
  dependsOn: string[];
}

/** One invoke (or component method call) a caller expected: its token, inputs and the provider reference it went to. */
export interface RecordedInvoke {
  token: string;
  inputs: Record<string, unknown>;
  provider: string | undefined;
  /** A method call's resource (`__self__`), by logical name; undefined for an invoke. */
  self?: string;
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
  /**
   * Invoke results by token; any other invoke throws. Component method calls (e.g.
   * `eks:index:Cluster/getKubeconfig`) are answered from the same map, their `__self__` left out
   * of the inputs (recorded as {@link RecordedInvoke.self}).
   */
  invokes?: Record<string, (inputs: Record<string, unknown>) => Record<string, unknown>>;
  /** Extra outputs for a resource beyond its inputs (e.g. a generated `arn`). */
  outputs?: (r: RecordedResource) => Record<string, unknown>;
  project?: string;
  stack?: string;
}

/**
 * The SDK's special-value key: a secret is `{ [SECRET_SIG]: SECRET_VALUE_SIG, value }` (also output values and resource
 * references).
 */
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

/** The logical name in a URN (`urn:pulumi:stack::project::type::name`). */
export function nameOfUrn(urn: string): string {
  const i = urn.lastIndexOf("::");
  if (!urn.startsWith("urn:pulumi:") || i < 0) throw new Error(`not a Pulumi URN: ${JSON.stringify(urn)}`);
  return urn.slice(i + 2);
}

/** The parts of the monitor's Register/ReadResourceRequest the recorder reads (generated protobuf getters). */
interface ResourceRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getDependenciesList(): string[];
  /** Register requests only: provider references by package (`opts.providers`). */
  getProvidersMap?: () => { toArray(): Array<[string, string]> };
  /** Register requests only: the dependencies each input property brought. */
  getPropertydependenciesMap?: () => { forEach(cb: (deps: { getUrnsList(): string[] }) => void): void };
}

interface Wiring {
  providers: Record<string, string>;
  parentUrn: string | undefined;
  dependencies: string[];
  dependsOn: string[];
}

function wiringOf(req: ResourceRequest): Wiring {
  const fromInputs = new Set<string>();
  req.getPropertydependenciesMap?.().forEach((d) => d.getUrnsList().forEach((u) => fromInputs.add(u)));
  const all = req.getDependenciesList();
  const parent = req.getParent();
  return {
    providers: Object.fromEntries(req.getProvidersMap?.().toArray() ?? []),
    parentUrn: parent === "" ? undefined : parent,
    dependencies: all.map(nameOfUrn),
    dependsOn: all.filter((u) => !fromInputs.has(u)).map(nameOfUrn),
  };
}

type Handler = (req: ResourceRequest, cb: unknown) => unknown;

/** What the SDK's special-value key (SECRET_SIG) holds for an output value and a secret (sdk/nodejs/runtime/rpc.ts). */
const OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
const SECRET_VALUE_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** A method call's arguments as plain values: output values and secrets unwrapped, resource references as their URN. */
function plainCallArg(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plainCallArg);
  if (v === null || typeof v !== "object") return v;
  const obj = v as Record<string, unknown>;
  if (SECRET_SIG in obj)
    return obj[SECRET_SIG] === OUTPUT_VALUE_SIG || obj[SECRET_SIG] === SECRET_VALUE_SIG
      ? plainCallArg(obj.value)
      : obj.urn;
  return Object.fromEntries(Object.entries(obj).map(([k, x]) => [k, plainCallArg(x)]));
}

/** The parts of the monitor's ResourceCallRequest a mocked method call reads. */
interface CallRequest {
  getTok(): string;
  getProvider(): string;
  getArgs(): { toJavaScript(): Record<string, unknown>; constructor: unknown };
}
type CallAnswer = (
  token: string,
  inputs: Record<string, unknown>,
  provider: string,
  self: string | undefined,
) => Promise<Record<string, unknown>>;

/**
 * Wraps the installed mock monitor so each registration's (and read's) parent and dependencies
 * are kept by type and name until the mock's newResource, which the monitor calls next, takes them.
 */
function captureWiring(answer: CallAnswer): Map<string, Wiring> {
  const wiring = new Map<string, Wiring>();
  const monitor = pulumi.runtime.getMonitor() as unknown as
    | {
        registerResource: Handler;
        readResource: Handler;
        call?: (req: CallRequest, cb: (err: unknown, res?: unknown) => void) => void;
      }
    | undefined;
  if (monitor === undefined) throw new Error("installMocks: no mock monitor after pulumi.runtime.setMocks");
  // The mock monitor of @pulumi/pulumi 3.270 has no `call` (component methods such as
  // eks.Cluster.getKubeconfig): answer it from the invoke map, the result shaped as the SDK reads it.
  // A failed invoke reaches the SDK as the engine's gRPC error, whose message the SDK reads from
  // `details`; the mock monitor passes the thrown Error, without it: keep its message.
  const invoke = (
    monitor as unknown as { invoke: (req: unknown, cb: (err: unknown, res?: unknown) => void) => unknown }
  ).invoke.bind(monitor);
  (monitor as unknown as { invoke: typeof invoke }).invoke = (req, cb) =>
    invoke(req, (err, res) =>
      cb(err instanceof Error && !("details" in err) ? Object.assign(err, { details: err.message }) : err, res),
    );
  monitor.call = (req, cb) => {
    const args = req.getArgs();
    const raw = args.toJavaScript();
    const self =
      typeof raw.__self__ === "object" && raw.__self__ !== null
        ? String((raw.__self__ as { urn?: unknown }).urn)
        : undefined;
    const inputs = plainCallArg(Object.fromEntries(Object.entries(raw).filter(([k]) => k !== "__self__"))) as Record<
      string,
      unknown
    >;
    const Struct = args.constructor as { fromJavaScript(o: Record<string, unknown>): unknown };
    answer(req.getTok(), inputs, req.getProvider(), self === undefined ? undefined : nameOfUrn(self))
      .then(async (result) => {
        const serialized = await pulumi.runtime.serializeProperties("mock call", result);
        cb(null, {
          getFailuresList: () => [],
          getReturn: () => Struct.fromJavaScript(serialized),
          getReturndependenciesMap: () => undefined,
        });
      })
      .catch((err: unknown) => cb({ details: (err as Error).message }));
  };
  for (const method of ["registerResource", "readResource"] as const) {
    const original = monitor[method].bind(monitor);
    monitor[method] = (req, cb) => {
      wiring.set(`${req.getType()}\0${req.getName()}`, wiringOf(req));
      return original(req, cb);
    };
  }
  return wiring;
}

export function installMocks(o: MockOptions = {}): MockRecorder {
  const resources: RecordedResource[] = [];
  const calls: string[] = [];
  const invokes: RecordedInvoke[] = [];
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
  let wiring = new Map<string, Wiring>();
  void pulumi.runtime.setMocks(
    {
      newResource(args: pulumi.runtime.MockResourceArgs): { id: string; state: Record<string, unknown> } {
        const key = `${args.type}\0${args.name}`;
        const w = wiring.get(key);
        if (w === undefined)
          throw new Error(`installMocks: ${args.type} ${args.name} reached the mocks without passing the monitor`);
        wiring.delete(key);
        const rec: RecordedResource = {
          type: args.type,
          name: args.name,
          inputs: mapSecrets(args.inputs, (x) => x) as Record<string, unknown>,
          redacted: mapSecrets(args.inputs, () => "[secret]") as Record<string, unknown>,
          provider: args.provider,
          parent: w.parentUrn === undefined ? undefined : nameOfUrn(w.parentUrn),
          ...w,
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
  wiring = captureWiring((token, inputs, provider, self) => {
    const handler = o.invokes?.[token];
    if (handler === undefined) return Promise.reject(new Error(`unexpected call ${token} (${JSON.stringify(inputs)})`));
    calls.push(token);
    invokes.push({ token, inputs, provider: provider === "" ? undefined : provider, self });
    return Promise.resolve().then(() => handler(inputs));
  });
  return recorder;
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
      return {
        vpcId: "vpc-1",
        privateSubnetIds: ["subnet-p1", "subnet-p2", "subnet-p3"],
        publicSubnetIds: ["subnet-u1", "subnet-u2", "subnet-u3"],
      };
    case "eks:index:Cluster":
      return { kubeconfigJson: MOCK_KUBECONFIG, clusterSecurityGroupId: "sg-cluster" };
    case "aws:iam/role:Role":
      return { arn: `arn:aws:iam::${MOCK_ACCOUNT}:role/${r.name}`, name: r.name };
    case "aws:sqs/queue:Queue":
      return {
        arn: `arn:aws:sqs:us-west-2:${MOCK_ACCOUNT}:${String(r.inputs.name)}`,
        url: `https://sqs.us-west-2.amazonaws.com/${MOCK_ACCOUNT}/${String(r.inputs.name)}`,
      };
    case "aws:cloudwatch/eventRule:EventRule":
      return { name: r.name };
    case "aws:amp/workspace:Workspace":
      return {
        arn: `arn:aws:aps:us-west-2:${MOCK_ACCOUNT}:workspace/ws-mock`,
        prometheusEndpoint: ampEndpoint("ws-mock"),
      };
    case "aws:amp/scraper:Scraper":
      return {
        arn: `arn:aws:aps:us-west-2:${MOCK_ACCOUNT}:scraper/s-mock`,
        roleArn: `arn:aws:iam::${MOCK_ACCOUNT}:role/aws-service-role/scraper.aps.amazonaws.com/AWSServiceRoleForAmazonPrometheusScraper_mock`,
      };
    case "pulumi-nodejs:dynamic:Resource":
      // The AddonPins step's run: what it stores from its inputs (the add-ons read it).
      return r.name.endsWith("-addon-pins-run")
        ? pinnedVersions({
            kubernetesVersion: String(r.inputs.kubernetesVersion),
            overrides: (r.inputs.overrides ?? {}) as Record<string, string>,
            resolved: r.inputs.resolved as Record<string, string>,
          })
        : {};
    default:
      return {};
  }
}

/** The query endpoint AMP gives a workspace (us-west-2, the mocks' region). */
export const ampEndpoint = (workspaceId: string): string =>
  `https://aps-workspaces.us-west-2.amazonaws.com/workspaces/${workspaceId}/`;

/** pulumi-eks's `Cluster.getKubeconfig` method and the add-on version lookup the EKS component calls. */
export const EKS_GET_KUBECONFIG = "eks:index:Cluster/getKubeconfig";
export const GET_ADDON_VERSION = "aws:eks/getAddonVersion:getAddonVersion";

/**
 * The kubeconfig pulumi-eks v4.3.0's `getKubeconfig` writes (nodejs/eks/cluster/cluster.ts
 * `generateKubeconfig(..., includeProfile = true)`), reduced to what the tests read: the
 * `aws eks get-token` arguments with `--role` and `--profile` when asked for.
 */
export function mockKubeconfig(opts: { profileName?: unknown; roleArn?: unknown }): string {
  const args = ["eks", "get-token", "--cluster-name", "valkey-test", "--output", "json"];
  if (typeof opts.roleArn === "string") args.push("--role", opts.roleArn);
  if (typeof opts.profileName === "string") args.push("--profile", opts.profileName);
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [],
    users: [{ name: "aws", user: { exec: { command: "aws", args } } }],
  });
}

/** A version string per add-on and Kubernetes version, so a version bump shows in every add-on. */
export function mockAddonVersion(addonName: unknown, kubernetesVersion: unknown): string {
  return `v${String(kubernetesVersion)}.0-${String(addonName)}-eksbuild.1`;
}

/** Answers for the invokes and calls every platform-eks program makes (the kubeconfig, the add-on versions). */
export const awsMockInvokes: NonNullable<MockOptions["invokes"]> = {
  [EKS_GET_KUBECONFIG]: (inputs) => ({ result: mockKubeconfig(inputs) }),
  // The AMP collector's source: the cluster's ARN is built from the deploying account.
  "aws:index/getCallerIdentity:getCallerIdentity": () => ({
    id: MOCK_ACCOUNT,
    accountId: MOCK_ACCOUNT,
    arn: `arn:aws:iam::${MOCK_ACCOUNT}:user/deployer`,
    userId: "AIDAMOCK",
  }),
  // metrics.amp.workspaceArn: the existing workspace's endpoint.
  "aws:amp/getWorkspace:getWorkspace": (inputs) => ({
    id: inputs.workspaceId,
    workspaceId: inputs.workspaceId,
    prometheusEndpoint: ampEndpoint(String(inputs.workspaceId)),
  }),
  [GET_ADDON_VERSION]: (inputs) => ({
    id: `${String(inputs.addonName)}-${String(inputs.kubernetesVersion)}`,
    addonName: inputs.addonName,
    kubernetesVersion: inputs.kubernetesVersion,
    mostRecent: inputs.mostRecent,
    version: mockAddonVersion(inputs.addonName, inputs.kubernetesVersion),
  }),
};
