/**
 * How the in-cluster load (load-main.ts) hands its write records to the FailureDrill step: compact
 * lines on stdout, read back from the pod's log. Pure: a formatter and its parser.
 *
 *   drill-load v2 {"prefix":"…","loadStart":…,"loadStop":…,"streams":[…]}
 *   w <stream> <key> <value> <sentAt> <doneAt> <ok 1|0> <waited 1|0> <error|-> [u:<unexpected reply>] [n:<node>]
 *   …
 *   drill-load end <record count>
 *
 * `n:` is the node that acknowledged the write (its address, or a cluster node id): the deployed
 * step's loss window reads it (the last write a deleted pod itself acknowledged). Every text field
 * is URI-encoded (so never holds a `:` of its own) (no spaces, no newlines); times are epoch ms with 3 decimals
 * (the pod's clock). The parser refuses anything else, naming the line: a log that is not
 * exactly this (an interleaved warning, a truncated log without its end line) is an error,
 * never a silently shorter ledger.
 */
import type { WriteRecord } from "./ledger.js";

export interface LoadHeader {
  prefix: string;
  /** Epoch ms (the load pod's clock) the streams started / stopped. */
  loadStart: number;
  loadStop: number;
  streams: string[];
}

export interface LoadOutput extends LoadHeader {
  records: WriteRecord[];
}

const HEADER = "drill-load v2 ";
const END = "drill-load end ";
const enc = encodeURIComponent;
const time = (t: number): string => t.toFixed(3);

export function formatRecordLine(r: WriteRecord): string {
  const error = r.error === undefined ? "-" : enc(r.error);
  const unexpected = r.unexpectedReply === undefined ? "" : ` u:${enc(r.unexpectedReply)}`;
  const node = r.node === undefined ? "" : ` n:${enc(r.node)}`;
  return `w ${enc(r.stream)} ${enc(r.key)} ${enc(r.value)} ${time(r.sentAt)} ${time(r.doneAt)} ${r.ok ? 1 : 0} ${r.waited ? 1 : 0} ${error}${unexpected}${node}`;
}

/**
 * The line the load prints once every stream has its first acknowledgement (or its wait for them
 * ran out, naming the streams still without one): the deployed drill injects its fault only after
 * it. Lines starting with "# " are notes, skipped by the parser.
 */
export const WRITING_LINE = "# writing";

/** The writing line: every stream acknowledged, or the streams that were not after the wait. */
export function formatWritingLine(silent: readonly string[]): string {
  return `${WRITING_LINE}${silent.length === 0 ? "" : ` (no acknowledgement yet: ${silent.map(enc).join(" ")})`}\n`;
}

/** The streams a load's writing line names as without an acknowledgement ([]: none); undefined: no writing line yet. */
export function writingLineSilent(log: string): string[] | undefined {
  const line = log.split("\n").find((l) => l.startsWith(WRITING_LINE));
  if (line === undefined) return undefined;
  const silent = /\(no acknowledgement yet: (.*)\)$/.exec(line)?.[1];
  return silent === undefined ? [] : silent.split(" ").map((x) => decodeURIComponent(x));
}

/** The whole output: header, one line per record, end line with the count. */
export function formatRecordLines(o: LoadOutput): string {
  const header = {
    prefix: o.prefix,
    loadStart: Number(time(o.loadStart)),
    loadStop: Number(time(o.loadStop)),
    streams: o.streams,
  };
  return [
    `${HEADER}${JSON.stringify(header)}`,
    ...o.records.map(formatRecordLine),
    `${END}${o.records.length}`,
    "",
  ].join("\n");
}

export class RecordLineError extends Error {
  constructor(line: number, text: string, why: string) {
    super(
      `drill load output, line ${line}: ${why}: ${JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text)}`,
    );
    this.name = "RecordLineError";
  }
}

const TIME_RE = /^\d+(\.\d+)?$/;

function decode(s: string, line: number, text: string, what: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new RecordLineError(line, text, `${what} is not URI-encoded`);
  }
}

export function parseRecordLine(text: string, line = 1): WriteRecord {
  const f = text.split(" ");
  if (f[0] !== "w" || f.length < 9 || f.length > 11)
    throw new RecordLineError(
      line,
      text,
      "not a write record (expected 9 to 11 space-separated fields starting with w)",
    );
  const [, stream = "", key = "", value = "", sent = "", done = "", ok = "", waited = "", error = "", ...tagged] = f;
  if (!TIME_RE.test(sent) || !TIME_RE.test(done))
    throw new RecordLineError(line, text, "sentAt/doneAt are not epoch milliseconds");
  if (!/^[01]$/.test(ok) || !/^[01]$/.test(waited)) throw new RecordLineError(line, text, "ok/waited are not 0 or 1");
  const r: WriteRecord = {
    stream: decode(stream, line, text, "stream"),
    key: decode(key, line, text, "key"),
    value: decode(value, line, text, "value"),
    sentAt: Number(sent),
    doneAt: Number(done),
    ok: ok === "1",
    waited: waited === "1",
  };
  if (r.stream === "" || r.key === "") throw new RecordLineError(line, text, "empty stream or key");
  if (error !== "-") r.error = decode(error, line, text, "error");
  for (const t of tagged) {
    if (t.startsWith("u:") && r.unexpectedReply === undefined)
      r.unexpectedReply = decode(t.slice(2), line, text, "unexpected reply");
    else if (t.startsWith("n:") && r.node === undefined) r.node = decode(t.slice(2), line, text, "node");
    else
      throw new RecordLineError(
        line,
        text,
        `field '${t.slice(0, 20)}' is neither u:<unexpected reply> nor n:<node> (or repeats one)`,
      );
  }
  return r;
}

function parseHeader(text: string): LoadHeader {
  const h = JSON.parse(text.slice(HEADER.length)) as Partial<LoadHeader>;
  const ok =
    typeof h.prefix === "string" &&
    typeof h.loadStart === "number" &&
    typeof h.loadStop === "number" &&
    Array.isArray(h.streams) &&
    h.streams.every((s) => typeof s === "string");
  if (!ok) throw new Error("missing prefix, loadStart, loadStop or streams");
  return {
    prefix: h.prefix as string,
    loadStart: h.loadStart as number,
    loadStop: h.loadStop as number,
    streams: h.streams as string[],
  };
}

/**
 * Parses the whole output (a pod log); blank lines and "# " notes are skipped, anything else unknown is an error naming
 * its line.
 */
export function parseRecordLines(log: string): LoadOutput {
  const lines = log.split("\n");
  let header: LoadHeader | undefined;
  let end: number | undefined;
  const records: WriteRecord[] = [];
  lines.forEach((raw, i) => {
    const text = raw.replace(/\r$/, "");
    const n = i + 1;
    if (text.trim() === "" || text.startsWith("# ")) return;
    if (end !== undefined) throw new RecordLineError(n, text, "text after the end line");
    if (text.startsWith(HEADER)) {
      if (header !== undefined) throw new RecordLineError(n, text, "a second header");
      try {
        header = parseHeader(text);
      } catch (err) {
        throw new RecordLineError(n, text, `bad header (${(err as Error).message})`);
      }
      return;
    }
    if (header === undefined) throw new RecordLineError(n, text, "expected the header line first");
    if (text.startsWith(END)) {
      const count = text.slice(END.length);
      if (!/^\d+$/.test(count)) throw new RecordLineError(n, text, "end line without a record count");
      if (Number(count) !== records.length)
        throw new RecordLineError(n, text, `the end line counts ${count} records, ${records.length} were read`);
      end = Number(count);
      return;
    }
    records.push(parseRecordLine(text, n));
  });
  if (header === undefined) throw new Error("drill load output has no header line (did the load start?)");
  if (end === undefined)
    throw new Error(
      `drill load output has no end line after ${records.length} records (truncated log, or the load did not finish)`,
    );
  const unknown = records.find((r) => !header!.streams.includes(r.stream));
  if (unknown !== undefined)
    throw new Error(
      `drill load output: record of stream "${unknown.stream}" not listed in the header (${header.streams.join(", ")})`,
    );
  return { ...header, records };
}
