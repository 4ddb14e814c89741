/**
 * How long the whole `cluster` stack takes to construct under Pulumi mocks (every component,
 * every builder, the dynamic providers' serialization), against a 3 s bar. Run with
 * `npm run bench:program`; exits 1 when the bar is missed. Not a test: a measurement printed
 * with its ratio to the bar, from this run only.
 */
import * as pulumi from "@pulumi/pulumi";
import { awsMockInvokes, awsMockOutputs, installMocks } from "./pulumi-mock-recorder.js";

const BAR_MS = 3000;

let lastRegistration = 0;
const recorder = installMocks({
  invokes: awsMockInvokes,
  stack: "cluster",
  outputs: (r) => {
    lastRegistration = performance.now();
    return awsMockOutputs(r);
  },
});

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
console.log(
  `cluster stack under mocks: ${recorder.resources.length} resources registered in ${total.toFixed(0)} ms (import + config + construction)`,
);
console.log(`vs bar ${BAR_MS} ms → ${(total / BAR_MS).toFixed(2)}x of bar ${total <= BAR_MS ? "PASS" : "FAIL"}`);
process.exit(total <= BAR_MS ? 0 : 1);
