import { describe, expect, it } from "vitest";
import type { WriteRecord } from "../../core/drill/ledger.js";
import { loadSettingsFromEnv } from "../../core/drill/load-env.js";
import {
  formatRecordLine,
  formatRecordLines,
  formatWritingLine,
  parseRecordLine,
  parseRecordLines,
  writingLineSilent,
  type LoadOutput,
} from "../../core/drill/record-lines.js";

const records: WriteRecord[] = [
  {
    stream: "sentinel-client",
    key: "drill:abc:primary:sentinel-client:1",
    value: "v1",
    sentAt: 1700000000000.123,
    doneAt: 1700000000001.5,
    ok: true,
    waited: true,
    node: "10.232.0.17:6379",
  },
  {
    stream: "write-endpoint",
    key: "drill:abc:primary:write-endpoint:1",
    value: "v1",
    sentAt: 1700000000002,
    doneAt: 1700000001002.25,
    ok: false,
    waited: false,
    error: "Command timed out\nafter 1000 ms: 50% done",
  },
  {
    stream: "write-endpoint",
    key: "key with spaces",
    value: "v 2",
    sentAt: 1700000000003,
    doneAt: 1700000000004,
    ok: true,
    waited: false,
  },
  {
    stream: "write-endpoint",
    key: "k3",
    value: "v3",
    sentAt: 1700000000005,
    doneAt: 1700000000006,
    ok: false,
    waited: false,
    unexpectedReply: 'SET → "QUEUED"',
  },
];
const output: LoadOutput = {
  prefix: "drill:abc:primary",
  loadStart: 1699999999000.5,
  loadStop: 1700000010000,
  streams: ["sentinel-client", "write-endpoint"],
  records,
};

describe("drill record lines", () => {
  it("round-trips every field, errors with newlines and keys with spaces included", () => {
    const text = formatRecordLines(output);
    expect(parseRecordLines(text)).toEqual(output);
  });

  it("puts one record per line, with no space or newline inside a field", () => {
    const line = formatRecordLine(records[1]!);
    expect(line.split(" ")).toHaveLength(9);
    expect(line).not.toContain("\n");
    expect(parseRecordLine(line)).toEqual(records[1]);
  });

  it("keeps times to the microsecond and no finer", () => {
    const [r] = parseRecordLines(
      formatRecordLines({ ...output, records: [{ ...records[0]!, sentAt: 1.23456789, doneAt: 2 }] }),
    ).records;
    expect(r?.sentAt).toBe(1.235);
  });

  it("skips the load's writing line and other '# ' notes; finds the writing line in a log so far, and the streams it names as silent", () => {
    expect(formatWritingLine([])).toBe("# writing\n");
    expect(formatWritingLine(["write-endpoint", "a b"])).toBe(
      "# writing (no acknowledgement yet: write-endpoint a%20b)\n",
    );
    expect(parseRecordLines(formatWritingLine(["write-endpoint"]) + formatRecordLines(output)).records).toHaveLength(4);
    expect([
      writingLineSilent(""),
      writingLineSilent("node: warming\n"),
      writingLineSilent("x\n# writing (no acknowledgement yet: s)\n"),
      writingLineSilent(formatWritingLine(["write-endpoint", "a b"])),
      writingLineSilent(`x\n${formatWritingLine([])}y\n`),
    ]).toEqual([undefined, undefined, ["s"], ["write-endpoint", "a b"], []]);
  });

  it("skips blank lines (and CRLF endings)", () => {
    const text = formatRecordLines(output).replace(/\n/g, "\r\n\n");
    expect(parseRecordLines(text).records).toHaveLength(4);
  });

  const lines = formatRecordLines(output).split("\n");
  it.each([
    [
      "a garbage line among the records",
      [lines[0], lines[1], "Warning: something happened", ...lines.slice(2)],
      "line 3: not a write record",
    ],
    ["a record before the header", [lines[1], ...lines], "line 1: expected the header line first"],
    [
      "a bad time",
      [lines[0], lines[1]!.replace(/ 1700000000000\.123 /, " soon "), ...lines.slice(2)],
      "line 2: sentAt/doneAt are not epoch milliseconds",
    ],
    [
      "a bad flag",
      [lines[0], lines[1]!.replace(/ 1 1 - /, " yes 1 - "), ...lines.slice(2)],
      "line 2: ok/waited are not 0 or 1",
    ],
    [
      "an end line that miscounts",
      [...lines.slice(0, 2), ...lines.slice(3)],
      "the end line counts 4 records, 3 were read",
    ],
    ["text after the end line", [...lines.slice(0, -1), "more", ""], "text after the end line"],
    ["a second header", [lines[0], ...lines], "line 2: a second header"],
    ["a broken header", ['drill-load v2 {"prefix":1}', ...lines.slice(1)], "line 1: bad header"],
    ["an unknown trailing field", [lines[0], `${lines[1]} x:1`, ...lines.slice(2)], "line 2: field 'x:1' is neither"],
    ["a repeated node field", [lines[0], `${lines[1]} n:a`, ...lines.slice(2)], "line 2: field 'n:a' is neither"],
    [
      "bad URI encoding",
      [lines[0], lines[1]!.replace("sentinel-client", "sentinel%ZZ"), ...lines.slice(2)],
      "line 2: stream is not URI-encoded",
    ],
  ])("refuses %s, naming the line", (_name, bad, message) => {
    expect(() => parseRecordLines(bad.join("\n"))).toThrow(message);
  });

  it("refuses a log without a header or without the end line (truncated)", () => {
    expect(() => parseRecordLines("")).toThrow("no header line");
    expect(() => parseRecordLines(lines.slice(0, 3).join("\n"))).toThrow("no end line after 2 records");
  });

  it("refuses a record of a stream the header does not list", () => {
    const text = formatRecordLines({ ...output, streams: ["sentinel-client"] });
    expect(() => parseRecordLines(text)).toThrow('stream "write-endpoint" not listed in the header');
  });
});

describe("drill load settings from the Job's env", () => {
  const base = {
    DRILL_MODE: "replication",
    DRILL_TARGET_HOST: "w.ns.svc.cluster.local",
    DRILL_TARGET_PORT: "6379",
    DRILL_RATE: "50",
    DRILL_LOAD_S: "90",
    DRILL_KEY_PREFIX: "drill:k:primary",
  };
  const sentinel = {
    DRILL_SENTINEL_HOST: "s.ns.svc.cluster.local",
    DRILL_SENTINEL_PORT: "26379",
    DRILL_MASTER_NAME: "valkey",
  };

  it("reads every contract variable, with WAIT and command timeouts defaulted", () => {
    expect(loadSettingsFromEnv({ ...base, ...sentinel, VALKEY_PASSWORD: "pw" })).toEqual({
      mode: "replication",
      target: { host: "w.ns.svc.cluster.local", port: 6379 },
      sentinel: { host: "s.ns.svc.cluster.local", port: 26379, masterName: "valkey" },
      rate: 50,
      loadS: 90,
      keyPrefix: "drill:k:primary",
      waitTimeoutMs: 500,
      commandTimeoutMs: 1000,
      password: "pw",
    });
  });

  it.each([
    ["DRILL_MODE", { ...base, ...sentinel, DRILL_MODE: "sharded" }, "DRILL_MODE must be cluster or replication"],
    ["DRILL_RATE", { ...base, ...sentinel, DRILL_RATE: "0" }, "DRILL_RATE must be a whole number ≥ 1"],
    ["DRILL_KEY_PREFIX", { ...base, ...sentinel, DRILL_KEY_PREFIX: "" }, "DRILL_KEY_PREFIX is not set"],
    ["DRILL_SENTINEL_HOST", base, "DRILL_SENTINEL_HOST is not set"],
  ])("names %s when it is bad or missing", (_name, env, message) => {
    expect(() => loadSettingsFromEnv(env)).toThrow(message);
  });
});
