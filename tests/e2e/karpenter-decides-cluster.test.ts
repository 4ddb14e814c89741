/** Real Karpenter decides the Valkey pool's nodes for the cluster-mode release: see support/karpenter-decides.ts. */
import { karpenterDecides } from "./support/karpenter-decides.js";

karpenterDecides("cluster");
