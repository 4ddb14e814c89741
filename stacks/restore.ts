/**
 * The deployed restore's wiring (config `restore.from`): the release's RestoreSettings (where to
 * fetch from, with which image and credentials) and, on eks, the RestoreAccess role and Pod
 * Identity association, which must exist before the member pods start (the association is read
 * when a pod is admitted). Nothing when `restore.from` is unset.
 */
import type * as pulumi from "@pulumi/pulumi";
import { RestoreAccess } from "../components/aws/restore-access.js";
import { partitionOf } from "../components/aws/iam.js";
import { restoreServiceAccountName, type RestoreSettings } from "../components/valkey/restore-init.js";
import type { StackConfig } from "../config/types.js";
import type { PlatformResult } from "./platform.js";

export interface StackRestore {
  settings: RestoreSettings | undefined;
  /** What the release waits for (eks: the role and association). */
  ready: pulumi.Resource[];
}

export function stackRestore(
  config: StackConfig,
  platform: Pick<PlatformResult, "eks">,
  release: string,
): StackRestore {
  const from = config.restore.from;
  if (from === undefined) return { settings: undefined, ready: [] };
  const { backup } = config;
  const base = { from, awsCliImage: backup.awsCliImage, region: config.aws.region };
  if (platform.eks === undefined)
    return { settings: { ...base, endpoint: backup.endpoint, credentialsSecret: backup.credentialsSecret }, ready: [] };
  const serviceAccount = restoreServiceAccountName(release);
  const access = new RestoreAccess(
    "valkey-restore-access",
    {
      clusterName: platform.eks.clusterName,
      namespace: config.valkey.namespace,
      serviceAccount,
      from,
      partition: partitionOf(config.aws.region),
    },
    { provider: platform.eks.awsProvider },
  );
  return { settings: { ...base, serviceAccount }, ready: [access] };
}
