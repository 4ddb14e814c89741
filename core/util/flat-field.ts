/**
 * A field of a flat `[field, value, field, value, …]` reply (SENTINEL SENTINELS / REPLICAS /
 * PRIMARY entries, HGETALL): the value after `name` at a field position, undefined when absent.
 */
export function flatField(flat: readonly unknown[], name: string): string | undefined {
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === name) return String(flat[i + 1]);
  return undefined;
}
