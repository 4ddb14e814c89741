/** Real Karpenter decides the Valkey pool's nodes for the replication-mode release: see support/karpenter-decides.ts. */
import { karpenterDecides } from "./support/karpenter-decides.js";

karpenterDecides("replication");
