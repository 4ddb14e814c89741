/**
 * The Pulumi mock recorder for tests (it lives in apps/perf/pulumi-mock-recorder.ts, which
 * the program perf script uses too), plus helpers that read Outputs under mocks and `settle()`,
 * which waits until the mocked program stopped registering. Import this module and call
 * `installMocks()` BEFORE importing the components under test.
 */
import * as pulumi from "@pulumi/pulumi";
import {
  installMocks as installRecorder,
  type MockOptions,
  type MockRecorder,
} from "../../apps/perf/pulumi-mock-recorder.js";

export {
  awsMockInvokes,
  ampEndpoint,
  awsMockOutputs,
  EKS_GET_KUBECONFIG,
  GET_ADDON_VERSION,
  MOCK_ACCOUNT,
  MOCK_KUBECONFIG,
  mockAddonVersion,
  mockKubeconfig,
  type MockOptions,
  type MockRecorder,
  type RecordedInvoke,
  type RecordedResource,
} from "../../apps/perf/pulumi-mock-recorder.js";

/** Resolves an Output's value in a mocked program (unknowns resolve to undefined). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

/** Whether an Output is marked secret. */
export function isSecretOutput(output: pulumi.Output<unknown>): Promise<boolean> {
  return pulumi.isSecret(output);
}

/**
 * The mock monitor's request methods; each answers through its callback (node_modules/@pulumi/pulumi/runtime/mocks.js
 * MockMonitor).
 */
const MONITOR_REQUESTS = ["registerResource", "readResource", "registerResourceOutputs", "invoke", "call"] as const;
type MonitorMethod = (req: unknown, cb: (err: unknown, res?: unknown) => void) => unknown;

/** Requests that reached the mock monitor since the module loaded (only grows: settle() compares it across a round). */
let requestsSeen = 0;
/** The requests the mock monitor has not answered yet, one promise each, resolved by the answer. */
const unanswered = new Set<Promise<void>>();

/**
 * installMocks of the recorder, with every request to the mock monitor tracked for {@link settle}
 * (wrapped around the recorder's own wrapping, so a request counts from when the SDK sends it).
 */
export function installMocks(o: MockOptions = {}): MockRecorder {
  const recorder = installRecorder(o);
  const monitor = pulumi.runtime.getMonitor() as unknown as
    Partial<Record<(typeof MONITOR_REQUESTS)[number], MonitorMethod>> | undefined;
  if (monitor === undefined) throw new Error("installMocks: no mock monitor after the recorder's installMocks");
  for (const method of MONITOR_REQUESTS) {
    const original = monitor[method]?.bind(monitor);
    if (original === undefined) throw new Error(`installMocks: the mock monitor has no ${method}`);
    monitor[method] = (req, cb) => {
      requestsSeen++;
      let answered = (): void => {};
      const answer = new Promise<void>((resolve) => (answered = resolve));
      unanswered.add(answer);
      const done = () => {
        unanswered.delete(answer);
        answered();
      };
      try {
        return original(req, (err, res) => {
          done();
          cb(err, res);
        });
      } catch (err) {
        done();
        throw err;
      }
    };
  }
  return recorder;
}

/**
 * Waits until the mocked program is idle: every request that reached the mock monitor has been
 * answered (however long a mock takes), and so has everything the answers released (resources
 * constructed in apply() callbacks, after an invoke or another registration). A round awaits the
 * unanswered requests, then lets the callbacks their answers queued run (one event-loop turn, not
 * a length of time); settle() returns after the first round in which no new request reached the
 * monitor. A registration still waiting for something the test holds back (a pending dependsOn,
 * an unresolved input) is not waited for: it has not reached the monitor, and checking that it
 * has not is what such a test does. Not seen: a program that waits on something outside Pulumi
 * (a timer, a file read) between two registrations; under the mocks nothing of ours does.
 */
export async function settle(): Promise<void> {
  let seen = -1;
  while (requestsSeen !== seen || unanswered.size > 0) {
    seen = requestsSeen;
    await Promise.all([...unanswered]);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
