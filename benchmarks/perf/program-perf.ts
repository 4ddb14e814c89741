/**
 * How long the whole `cluster` stack takes to construct under Pulumi mocks (every component,
 * every builder, the dynamic providers' serialization), against a 3 s bar. Run with
 * `npm run bench:program`; exits 1 when the bar is missed. Not a test: a measurement printed
 * with its ratio to the bar, from this run only.
 */
import * as pulumi from "@pulumi/pulumi";

const BAR_MS = 3000;

function mockOutputs(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  if (type === "aws:iam/role:Role") return { arn: `arn:aws:iam::123456789012:role/${name}`, name };
  if (type === "aws:sqs/queue:Queue") return { arn: `arn:aws:sqs:us-west-2:123456789012:${String(inputs.name)}` };
  if (type === "eks:index:Cluster") return { kubeconfigJson: "{}", clusterSecurityGroupId: "sg-1" };
  if (type === "awsx:ec2:Vpc") return { vpcId: "vpc-1", privateSubnetIds: ["s1", "s2", "s3"], publicSubnetIds: ["p1", "p2", "p3"] };
  return {};
}

let registered = 0;
let lastRegistration = 0;
await pulumi.runtime.setMocks(
  {
    newResource: (a) => {
      registered++;
      lastRegistration = performance.now();
      return { id: `${a.name}-id`, state: { ...(a.inputs as Record<string, unknown>), ...mockOutputs(a.type, a.name, a.inputs as Record<string, unknown>) } };
    },
    call: (a) => {
      throw new Error(`unexpected invoke ${a.token}`);
    },
  },
  "valkey-on-eks",
  "cluster",
  false,
);

const started = performance.now();
const { loadStackFile } = await import("../../stacks/config-schema.js");
const { runProgram } = await import("../../stacks/program.js");
const imported = performance.now();
const { config } = loadStackFile("stacks/Pulumi.cluster.yaml");
const out = runProgram({ stack: "cluster", config, password: pulumi.secret("perf-password") });
await new Promise<void>((resolve) => out.report.apply(() => resolve()));
// Registrations triggered from outputs may still trickle in: wait until none came for 100 ms.
while (performance.now() - lastRegistration < 100) await new Promise((r) => setTimeout(r, 20));
const done = lastRegistration;

const total = done - started;
console.log(`modules imported in ${(imported - started).toFixed(0)} ms`);
console.log(`cluster stack under mocks: ${registered} resources registered in ${total.toFixed(0)} ms (import + config + construction)`);
console.log(`vs bar ${BAR_MS} ms → ${(total / BAR_MS).toFixed(2)}x of bar ${total <= BAR_MS ? "PASS" : "FAIL"}`);
process.exit(total <= BAR_MS ? 0 : 1);
