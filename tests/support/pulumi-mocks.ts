/**
 * The Pulumi mock recorder for tests (it lives in benchmarks/perf/pulumi-mock-recorder.ts, which
 * the program perf script uses too), plus helpers that read Outputs under mocks. Import this
 * module and call `installMocks()` BEFORE importing the components under test.
 */
import * as pulumi from "@pulumi/pulumi";

export {
  awsMockInvokes,
  awsMockOutputs,
  EKS_GET_KUBECONFIG,
  GET_ADDON_VERSION,
  installMocks,
  MOCK_ACCOUNT,
  MOCK_KUBECONFIG,
  mockAddonVersion,
  mockKubeconfig,
  type MockOptions,
  type MockRecorder,
  type RecordedInvoke,
  type RecordedResource,
} from "../../benchmarks/perf/pulumi-mock-recorder.js";

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
