/** The ports every layer agrees on: Valkey clients, and the cluster bus (client port + 10000). */
export const VALKEY_PORT = 6379;
export const VALKEY_BUS_PORT = 16379;
