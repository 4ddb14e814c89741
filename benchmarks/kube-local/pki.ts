/**
 * The local real cluster's certificates (openssl): a CA, the API server's serving certificate for
 * every name it is reached by, the API server's client certificate for kubelets, and the
 * service-account key pair. Made once per `up` in the state directory, which `down` removes.
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { API_IP, KUBERNETES_SERVICE_IP } from "./plan.js";

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

function signed(dir: string, name: string, subject: string, ext: string[]): void {
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
      "30",
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
}

export function makePki(dir: string): void {
  openssl(
    [
      "req",
      "-x509",
      ...newKey("ca"),
      "-out",
      "ca.crt",
      "-days",
      "30",
      "-subj",
      "/CN=valkey-on-eks-kube-local-ca",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    ],
    dir,
  );
  const names = [
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
    "localhost",
  ];
  signed(dir, "apiserver", "/CN=kube-apiserver", [
    "extendedKeyUsage=serverAuth",
    `subjectAltName=IP:127.0.0.1,IP:${API_IP},IP:${KUBERNETES_SERVICE_IP},${names.map((n) => `DNS:${n}`).join(",")}`,
  ]);
  signed(dir, "apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", [
    "extendedKeyUsage=clientAuth",
  ]);
  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  writeFileSync(join(dir, "sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  writeFileSync(join(dir, "sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));
}
