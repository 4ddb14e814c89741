/**
 * What every Kubernetes provider of the program is told besides where the cluster is (the byo
 * provider in stacks/platform.ts and the EKS one in components/eks-cluster.ts).
 *
 * `enableConfigMapMutable`: a ConfigMap whose data changes is updated in place, not replaced.
 * Without it pulumi-kubernetes replaces it, and a release's ConfigMap has a fixed name, so the
 * replacement deletes it before creating the new one: for that moment every member that restarts
 * finds no scripts to mount, and a stack upgrade shows a replace. In place, the pods still roll on
 * a change: each StatefulSet's pod template carries the data's hash (`configHash`). What that asks
 * of the scripts: between the update and its roll, a running pod runs the new preStop and
 * readiness scripts with its old environment, so a script reads no environment variable that the
 * pods of the previous release did not set. The file and the tests that hold it:
 * tests/e2e/step-upgrade.test.ts (0 replaced from an older release's state).
 */
export const PROVIDER_BEHAVIOUR = { enableConfigMapMutable: true } as const;
