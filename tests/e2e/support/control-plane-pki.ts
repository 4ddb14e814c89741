/**
 * The local control plane's certificates (openssl: a CA, the API server's serving certificate, a
 * service-account key pair), its admin kubeconfig, and the address arithmetic for the kwok nodes'
 * pod CIDRs inside 127.0.0.0/8.
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

/** A CA, a serving certificate for 127.0.0.1/localhost (and the in-cluster names), a service-account key pair. */
export function makeCertificates(dir: string, serviceIp: string): void {
  const days = "2";
  // A new P-256 key, unencrypted, written to <name>.key.
  const newKey = (name: string) => [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
  ];
  openssl(
    [
      "req",
      "-x509",
      ...newKey("ca"),
      "-out",
      "ca.crt",
      "-days",
      days,
      "-subj",
      "/CN=valkey-on-eks-e2e-ca",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    ],
    dir,
  );
  openssl(["req", ...newKey("apiserver"), "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver"], dir);
  writeFileSync(
    join(dir, "apiserver.ext"),
    [
      "basicConstraints=CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      `subjectAltName=IP:127.0.0.1,IP:${serviceIp},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local`,
      "",
    ].join("\n"),
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "apiserver.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "apiserver.crt",
      "-days",
      days,
      "-extfile",
      "apiserver.ext",
    ],
    dir,
  );
  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  writeFileSync(join(dir, "sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  writeFileSync(join(dir, "sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));
}

export function kubeconfigText(server: string, caPem: string, token: string): string {
  const ca = Buffer.from(caPem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: local",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    "users:",
    "- name: admin",
    "  user:",
    `    token: ${token}`,
    "contexts:",
    "- name: local",
    "  context:",
    "    cluster: local",
    "    user: admin",
    "current-context: local",
    "",
  ].join("\n");
}

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
