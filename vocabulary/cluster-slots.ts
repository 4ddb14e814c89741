/** Valkey cluster mode's hash slots: every key maps to one of them, every serving primary owns at least one. */
export const CLUSTER_SLOT_COUNT = 16384;
