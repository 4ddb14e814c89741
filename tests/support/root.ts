/**
 * Tests that need root (iptables rules, network namespaces): as a non-root user they skip, and
 * their name says why; as root they run, and a missing tool fails them (never a silent pass).
 */
export function rootSkipReason(what: string): string {
  return process.getuid?.() === 0 ? "" : `needs root: ${what}`;
}

/** `name`, with "(skipped: reason)" appended when there is a reason. */
export function titled(name: string, reason: string): string {
  return reason === "" ? name : `${name} (skipped: ${reason})`;
}
