/**
 * Plain (Input-free) shapes of the Kubernetes objects the Valkey builders return: the
 * @pulumi/kubernetes input types with every `Input<T>` unwrapped to `T`. A plain value is
 * assignable to the corresponding resource args, and tests read it without resolving Outputs.
 */
import type * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";

export type Plain<T> = pulumi.Unwrap<T>;

export type ObjectMeta = Plain<k8s.types.input.meta.v1.ObjectMeta>;
export type StatefulSet = Plain<k8s.types.input.apps.v1.StatefulSet>;
export type PodSpec = Plain<k8s.types.input.core.v1.PodSpec>;
export type Container = Plain<k8s.types.input.core.v1.Container>;
export type Affinity = Plain<k8s.types.input.core.v1.Affinity>;
export type TopologySpreadConstraint = Plain<k8s.types.input.core.v1.TopologySpreadConstraint>;
export type KubeToleration = Plain<k8s.types.input.core.v1.Toleration>;
export type PersistentVolumeClaim = Plain<k8s.types.input.core.v1.PersistentVolumeClaim>;
export type Service = Plain<k8s.types.input.core.v1.Service>;
export type ConfigMap = Plain<k8s.types.input.core.v1.ConfigMap>;
export type Secret = Plain<k8s.types.input.core.v1.Secret>;
export type NetworkPolicy = Plain<k8s.types.input.networking.v1.NetworkPolicy>;
export type PodDisruptionBudget = Plain<k8s.types.input.policy.v1.PodDisruptionBudget>;
export type EnvVar = Plain<k8s.types.input.core.v1.EnvVar>;
export type CronJob = Plain<k8s.types.input.batch.v1.CronJob>;
export type ServiceAccount = Plain<k8s.types.input.core.v1.ServiceAccount>;
