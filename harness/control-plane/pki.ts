/**
 * The local control planes' certificates (openssl), one module for both: kube:local's (made once per
 * `up` in its state directory, which `down` removes) and the e2e tier's kwok control plane
 * (tests/e2e/support/control-plane.ts), both launched by launch.ts. A CA, the API server's serving certificate for
 * every name it
 * is reached by, for kube:local the API server's client certificate for kubelets, and the
 * service-account key pair; and the token kubeconfigs that trust that CA.
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

const newKey = (name: string) => [
  "-newkey",
  "ec",
  "-pkeyopt",
  "ec_paramgen_curve:prime256v1",
  "-nodes",
  "-keyout",
  `${name}.key`,
];

function signed(dir: string, days: string, name: string, subject: string, ext: string[]): void {
  openssl(["req", ...newKey(name), "-out", `${name}.csr`, "-subj", subject], dir);
  writeFileSync(
    join(dir, `${name}.ext`),
    ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment", ...ext, ""].join("\n"),
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      "-days",
      days,
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
}

/** What differs between the local control planes' certificates (kube:local and the e2e tier's kwok one). */
export interface PkiOptions {
  /** The CA's common name. */
  caName: string;
  /** Validity of every certificate, in days. */
  days: number;
  /** Addresses in the API server's serving certificate besides 127.0.0.1 (its own, the `kubernetes` Service's). */
  apiserverIps: readonly string[];
  /** Also the API server's client certificate for kubelets (system:masters). @default false */
  kubeletClient?: boolean;
}

/** The API server's in-cluster names, in its serving certificate. */
const APISERVER_NAMES = [
  "kubernetes",
  "kubernetes.default",
  "kubernetes.default.svc",
  "kubernetes.default.svc.cluster.local",
  "localhost",
];

/**
 * A CA, the API server's serving certificate, optionally its kubelet client certificate, and the service-account key
 * pair.
 */
export function makePki(dir: string, o: PkiOptions): void {
  const days = String(o.days);
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
      `/CN=${o.caName}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    ],
    dir,
  );
  const ips = ["127.0.0.1", ...o.apiserverIps].map((ip) => `IP:${ip}`);
  signed(dir, days, "apiserver", "/CN=kube-apiserver", [
    "extendedKeyUsage=serverAuth",
    `subjectAltName=${[...ips, ...APISERVER_NAMES.map((n) => `DNS:${n}`)].join(",")}`,
  ]);
  if (o.kubeletClient === true)
    signed(dir, days, "apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", [
      "extendedKeyUsage=clientAuth",
    ]);
  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  writeFileSync(join(dir, "sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  writeFileSync(join(dir, "sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));
}

/** A kubeconfig that authenticates with a bearer token; `name` names its cluster, user and context. */
export function tokenKubeconfig(server: string, caPem: string, token: string, name = "kube-local"): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${name}`,
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${Buffer.from(caPem).toString("base64")}`,
    "users:",
    `- name: ${name}`,
    "  user:",
    `    token: ${token}`,
    "contexts:",
    `- name: ${name}`,
    "  context:",
    `    cluster: ${name}`,
    `    user: ${name}`,
    `current-context: ${name}`,
    "",
  ].join("\n");
}
