/** Pure: the dotted version in a tool's `--version` output (the server's, or a benchmark client's). */
export function parseToolVersion(output: string): string | undefined {
  const v = /v=(\d+\.\d+\.\d+)/.exec(output) ?? /(\d+\.\d+\.\d+)/.exec(output);
  return v?.[1];
}
