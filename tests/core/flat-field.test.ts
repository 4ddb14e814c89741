import { describe, expect, it } from "vitest";
import { flatField } from "../../core/util/flat-field.js";

describe("flatField: a field of a flat [field, value, …] reply", () => {
  const entry = ["name", "ip", "ip", "10.0.0.7", "port", "26379", "flags", "sentinel"];
  it.each([
    ["a field", "port", "26379"],
    ["a field whose name is also a value: the field's, not the value's neighbour", "ip", "10.0.0.7"],
    ["a name found only as a value: absent", "sentinel", undefined],
    ["absent", "runid", undefined],
  ])("%s", (_n, name, want) => {
    expect(flatField(entry, name)).toBe(want);
  });

  it("a trailing field without its value: absent", () => {
    expect(flatField(["ip"], "ip")).toBeUndefined();
  });
});
