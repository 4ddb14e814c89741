/** The ports every layer agrees on: Valkey clients, the cluster bus (client port + 10000), Sentinel. */
export const VALKEY_PORT = 6379;
export const VALKEY_BUS_PORT = 16379;
/** Sentinel (replication mode). */
export const SENTINEL_PORT = 26379;
/** redis_exporter's own default port, where the member and Sentinel pods serve `/metrics` (config metrics.port). */
export const DEFAULT_EXPORTER_PORT = 9121;
