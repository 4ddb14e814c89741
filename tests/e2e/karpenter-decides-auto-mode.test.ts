/**
 * Real Karpenter decides the Valkey pool's nodes for the cluster-mode release on the NodePool the program renders for EKS
 * Auto Mode (`eks.autoMode: true`, components/aws/auto-mode.ts buildAutoNodePool): see support/karpenter-decides.ts.
 * Karpenter's kwok provider stands in for EKS's own Karpenter and for Auto Mode's NodeClass (a KWOKNodeClass).
 */
import { karpenterDecides } from "./support/karpenter-decides.js";

karpenterDecides("cluster", "auto-mode");
