/**
 * The address arithmetic for the kwok nodes' pod CIDRs inside 127.0.0.0/8. The control plane's
 * certificates and kubeconfig come from the one PKI module (harness/control-plane/pki.ts).
 */

/** Splits a /16 inside 127.0.0.0/8 into per-node /24s. */
export function nodeCidrs(podCidr: string, count: number): string[] {
  const m = /^127\.(\d{1,3})\.0\.0\/16$/.exec(podCidr);
  if (!m) throw new Error(`podCidr must be a /16 inside 127.0.0.0/8 like 127.64.0.0/16, got ${podCidr}`);
  return Array.from({ length: count }, (_, i) => `127.${m[1]}.${i + 1}.0/24`);
}

/** First usable address of a CIDR (the `kubernetes` Service's ClusterIP). */
export function firstIp(cidr: string): string {
  const [ip] = cidr.split("/");
  const parts = (ip ?? "").split(".").map(Number);
  parts[3] = (parts[3] ?? 0) + 1;
  return parts.join(".");
}
