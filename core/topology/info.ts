/** Parses `INFO` and `CLUSTER INFO` replies: `key:value` lines, `# Section` headers ignored. */
export function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const i = line.indexOf(":");
    if (i <= 0) continue;
    out.set(line.slice(0, i), line.slice(i + 1));
  }
  return out;
}

/** Parses an INFO field of the form `k1=v1,k2=v2` (e.g. `slave0:ip=...,port=...,state=online`). */
export function parseInfoFields(value: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of value.split(",")) {
    const i = part.indexOf("=");
    if (i > 0) out.set(part.slice(0, i), part.slice(i + 1));
  }
  return out;
}
