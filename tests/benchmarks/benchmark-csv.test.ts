import { describe, expect, it } from "vitest";
import { BenchmarkOutputError, parseBenchmarkCsv } from "../../benchmarks/run/benchmark-csv.js";

// Captured from redis-benchmark 7.0.15 against valkey-server 9.1.2 on 127.0.0.1:
//   redis-benchmark -h 127.0.0.1 -p 17001 -n 20000 -c 50 -P 16 -d 256 --threads 4 -r 1000000 -t set,get,incr --csv
const STANDALONE = [
  '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"',
  '"SET","79051.38","2.030","0.248","1.671","4.383","8.399","11.855"',
  '"GET","79681.28","0.784","0.064","0.679","1.567","4.279","7.071"',
  '"INCR","80000.00","1.016","0.072","0.815","2.719","4.047","7.159"',
  "",
].join("\n");

// Same client against a local 3-primary cluster: ... --cluster ... -t set,get --csv
const CLUSTER = [
  "Cluster has 3 master nodes:",
  "",
  "Master 0: f085aa792bfcf4a68729aa176523eefb942315a2 127.0.0.1:17013",
  "Master 1: 36fb26311ff55b22436c686cc20b713def1ca60e 127.0.0.1:17012",
  "Master 2: b9dffd24ce8c0bb74161486d4549c846a0e6bd37 127.0.0.1:17011",
  "",
  '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"',
  '"SET","78740.16","0.928","0.048","0.567","4.247","7.095","9.055"',
  '"GET","79681.28","0.861","0.064","0.167","3.207","16.271","16.447"',
  "",
].join("\n");

// A 1-request probe: the tool prints "inf" when the test took 0 whole milliseconds.
const PROBE = [
  '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"',
  '"PING_INLINE","inf","0.092","0.088","0.095","0.095","0.095","0.095"',
  '"PING_MBULK","inf","0.068","0.064","0.071","0.071","0.071","0.071"',
  "",
].join("\n");

// Progress fragments redis-benchmark writes with "\r" when not in --csv mode (verbatim prefix).
const PROGRESS =
  " \rSET: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)\r" +
  "                                                           \rSET: rps=77561.8 (overall: 77561.8) avg_msec=0.344 (overall: 0.344)\r";

const HEADER = STANDALONE.split("\n")[0] as string;

function errorOf(text: string): BenchmarkOutputError {
  try {
    parseBenchmarkCsv(text);
  } catch (err) {
    expect(err).toBeInstanceOf(BenchmarkOutputError);
    return err as BenchmarkOutputError;
  }
  throw new Error("expected a BenchmarkOutputError");
}

describe("parseBenchmarkCsv on real output", () => {
  it("reads every field of a standalone run", () => {
    expect(parseBenchmarkCsv(STANDALONE)).toEqual([
      {
        test: "SET",
        rps: 79051.38,
        avgMs: 2.03,
        minMs: 0.248,
        p50Ms: 1.671,
        p95Ms: 4.383,
        p99Ms: 8.399,
        maxMs: 11.855,
      },
      {
        test: "GET",
        rps: 79681.28,
        avgMs: 0.784,
        minMs: 0.064,
        p50Ms: 0.679,
        p95Ms: 1.567,
        p99Ms: 4.279,
        maxMs: 7.071,
      },
      { test: "INCR", rps: 80000, avgMs: 1.016, minMs: 0.072, p50Ms: 0.815, p95Ms: 2.719, p99Ms: 4.047, maxMs: 7.159 },
    ]);
  });

  it("skips the --cluster preamble", () => {
    const lines = parseBenchmarkCsv(CLUSTER);
    expect(lines.map((l) => [l.test, l.rps, l.p50Ms, l.p99Ms])).toEqual([
      ["SET", 78740.16, 0.567, 7.095],
      ["GET", 79681.28, 0.167, 16.271],
    ]);
  });

  it("accepts CRLF line ends and \\r progress fragments around the CSV", () => {
    const lines = parseBenchmarkCsv(PROGRESS + STANDALONE.replace(/\n/g, "\r\n"));
    expect(lines.map((l) => l.test)).toEqual(["SET", "GET", "INCR"]);
    expect(lines.every((l) => Object.values(l).every((v) => typeof v === "string" || Number.isFinite(v)))).toBe(true);
  });

  it("rejects rps 'inf' unless asked to accept it, then gives Infinity", () => {
    expect(errorOf(PROBE).message).toMatch(/rps is "inf", not a number \(the test finished within 1 ms/);
    const lines = parseBenchmarkCsv(PROBE, { allowInfiniteRps: true });
    expect(lines.map((l) => [l.test, l.rps, l.p50Ms])).toEqual([
      ["PING_INLINE", Number.POSITIVE_INFINITY, 0.095],
      ["PING_MBULK", Number.POSITIVE_INFINITY, 0.071],
    ]);
  });
});

describe("parseBenchmarkCsv on bad output", () => {
  it("a truncated last line (unterminated quote) names the line", () => {
    const text = STANDALONE.slice(0, STANDALONE.indexOf('"INCR"') + 14);
    const e = errorOf(text);
    expect(e.message).toMatch(/line 4 is not valid CSV/);
    expect(e.message).toContain('`"INCR","80000.`');
  });

  it("a line cut at a field boundary is reported as truncated", () => {
    const e = errorOf(`${HEADER}\n"SET","79051.38","2.030"\n`);
    expect(e.message).toMatch(/line 2 has 3 field\(s\), the header has 8 \(truncated\?\)/);
    expect(e.message).toContain('"SET","79051.38","2.030"');
  });

  it("garbage instead of CSV", () => {
    const e = errorOf("Segmentation fault (core dumped)\n");
    expect(e.message).toMatch(/no CSV header/);
    expect(e.message).toContain("Segmentation fault (core dumped)");
  });

  it("garbage after the header", () => {
    const e = errorOf(`${HEADER}\nNode 127.0.0.1:6379 replied with error:\n`);
    expect(e.message).toContain("Node 127.0.0.1:6379 replied with error:");
  });

  it("a NaN field", () => {
    const e = errorOf(`${HEADER}\n"SET","79051.38","nan","0.248","1.671","4.383","8.399","11.855"\n`);
    expect(e.message).toMatch(/avg_latency_ms is "nan", not a number/);
    expect(e.message).toContain('"SET","79051.38","nan"');
  });

  it("an empty field", () => {
    expect(errorOf(`${HEADER}\n"SET","","2.030","0.248","1.671","4.383","8.399","11.855"\n`).message).toMatch(
      /rps is "", not a number/,
    );
  });

  it("missing header", () => {
    const e = errorOf(STANDALONE.split("\n").slice(1).join("\n"));
    expect(e.message).toMatch(/no CSV header/);
    expect(e.message).toContain('"SET","79051.38"');
  });

  it("a header lacking a column", () => {
    expect(errorOf('"test","rps","avg_latency_ms"\n"SET","1","2"\n').message).toMatch(
      /header on line 1 lacks min_latency_ms/,
    );
  });

  it("header only", () => {
    expect(errorOf(`${HEADER}\n`).message).toMatch(/header but no result lines/);
  });

  it("cluster preamble only (the run died before any test)", () => {
    expect(errorOf(CLUSTER.split('"test"')[0] as string).message).toMatch(/no CSV header/);
  });

  it("empty output", () => {
    expect(errorOf("").message).toMatch(/empty/);
    expect(errorOf(" \n\n").message).toMatch(/empty/);
  });
});
