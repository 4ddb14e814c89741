/**
 * One control plane and one Pulumi environment per e2e test file: started before the file's
 * tests, stopped after them, with typed clients for reading objects back.
 */
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll } from "vitest";
import { eventually } from "../../support/processes.js";
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from "./control-plane.js";
import { createPulumiEnv, type PulumiEnv } from "./pulumi-harness.js";

export interface E2eContext {
  plane: ControlPlane;
  env: PulumiEnv;
  core: k8s.CoreV1Api;
  apps: k8s.AppsV1Api;
  custom: k8s.CustomObjectsApi;
}

/** Registers beforeAll/afterAll hooks; the returned object is filled in before the first test. */
export function useE2eContext(
  setup?: (ctx: E2eContext) => Promise<void>,
  planeOptions: ControlPlaneOptions = {},
): E2eContext {
  const ctx = {} as E2eContext;
  beforeAll(async () => {
    ctx.plane = await startControlPlane(planeOptions);
    ctx.env = await createPulumiEnv();
    const kc = new k8s.KubeConfig();
    kc.loadFromString(ctx.plane.kubeconfig);
    ctx.core = kc.makeApiClient(k8s.CoreV1Api);
    ctx.apps = kc.makeApiClient(k8s.AppsV1Api);
    ctx.custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await setup?.(ctx);
  }, 180_000);
  afterAll(async () => {
    ctx.env?.dispose();
    await ctx.plane?.stop();
  }, 120_000);
  return ctx;
}

/** Waits until `namespace` is gone (a destroyed stack's namespace, finalized by the controllers). */
export async function namespaceDeleted(ctx: E2eContext, namespace: string, timeoutMs: number): Promise<void> {
  await eventually(`namespace ${namespace} to be deleted`, timeoutMs, async () => {
    try {
      await ctx.core.readNamespace({ name: namespace });
      return undefined;
    } catch {
      return true;
    }
  });
}
