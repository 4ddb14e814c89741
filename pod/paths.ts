/**
 * Where things are inside a Valkey pod: the mounted config files and scripts, the password file,
 * the memory-backed run dir and the data volume. The deployed defaults of every pod definition;
 * a local process passes its own directories instead.
 */

/** Where the ConfigMap (valkey.conf files and scripts) is mounted. */
export const CONFIG_MOUNT = "/etc/valkey";
/** Where the password Secret is mounted; the start script reads the password file from here. */
export const SECRET_MOUNT = "/etc/valkey-secret";
/** Memory-backed directory for the generated includes (auth.conf, announce.conf): never on disk. */
export const RUN_DIR = "/run/valkey";
/** The data volume: RDB, AOF and cluster nodes.conf. */
export const DATA_DIR = "/data";
/** The preStop's own log on the data volume (lib-hook-log.sh): it outlives an evicted pod. */
export const PRESTOP_LOG_FILE = "prestop.log";

/** ConfigMap keys. */
export const START_SCRIPT_KEY = "start.sh";
export const PRESTOP_SCRIPT_KEY = "prestop.sh";
export const HEAL_SCRIPT_KEY = "heal.sh";
export const REJOIN_SCRIPT_KEY = "rejoin.sh";
export const READINESS_SCRIPT_KEY = "readiness.sh";
export const FAILBACK_SCRIPT_KEY = "failback.sh";
/** The password's key in the Secret, and so its file name under SECRET_MOUNT. */
export const PASSWORD_SECRET_KEY = "password";
