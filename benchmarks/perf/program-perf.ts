/**
 * How long the whole `cluster` stack takes to construct under Pulumi mocks (every component,
 * every builder, the dynamic providers' serialization), against a 3 s bar. Run with
 * `npm run bench:program`; exits 1 when the bar is missed. Not a test: a measurement printed
 * with its ratio to the bar, from this run only.
 */
import * as pulumi from "@pulumi/pulumi";
import { awsMockOutputs } from "../../tests/support/pulumi-mocks.js";

const BAR_MS = 3000;


let registered = 0;
let lastRegistration = 0;
await pulumi.runtime.setMocks(
  {
    newResource: (a) => {
      registered++;
      lastRegistration = performance.now();
      return { id: `${a.name}-id`, state: { ...(a.inputs as Record<string, unknown>), ...awsMockOutputs({ type: a.type, name: a.name, inputs: a.inputs as Record<string, unknown>, redacted: {}, provider: a.provider }) } };
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
const { loadStackFile } = await import("../../config/schema.js");
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
