/**
 * Kubernetes resource quantities ("1", "500m", 2, "12Gi", "512Mi", "16G") parsed into plain
 * numbers: CPU in millicores, memory in bytes. The grammar is the one the API server accepts
 * (`<number><suffix>` with a binary-SI, decimal-SI or decimal-exponent suffix); anything else is a
 * {@link QuantityError} that says what was wrong and, for the usual slips ("12GB", "12gi"), what
 * was probably meant.
 */

/** A value that is not a valid Kubernetes quantity, or one that makes no sense for its resource. */
export class QuantityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "QuantityError";
  }
}

const BINARY_SI: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_SI: Readonly<Record<string, number>> = {
  "n": 1e-9,
  "u": 1e-6,
  "m": 1e-3,
  "": 1,
  "k": 1e3,
  "M": 1e6,
  "G": 1e9,
  "T": 1e12,
  "P": 1e15,
  "E": 1e18,
};

// sign, number, then one of: binary-SI suffix | decimal-SI suffix | decimal exponent.
const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE]?)|([eE][+-]?\d+))$/;
// Units people write by habit that Kubernetes does not accept.
const HABIT_RE = /^(\d+(?:\.\d+)?)\s*([kmgtpe])(i?)(b?)$/i;

/** A quantity as written in a stack file: a string such as "12Gi" or a bare number. */
export type QuantityInput = string | number;

function describeInput(value: unknown): string {
  return typeof value === "string" ? `'${value}'` : String(value);
}

/** Parses any quantity into its plain numeric value (e.g. "500m" → 0.5, "1Ki" → 1024). */
export function parseQuantity(value: QuantityInput): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new QuantityError(`${describeInput(value)} is not a finite number`);
    if (value < 0) throw new QuantityError(`${describeInput(value)} is negative`);
    return value;
  }
  const text = value.trim();
  const match = QUANTITY_RE.exec(text);
  if (!match) throw new QuantityError(`${describeInput(value)} is not a Kubernetes quantity${suggestion(text)}`);
  const [, sign, digits, binary, decimal, exponent] = match;
  const base = Number(digits);
  let multiplier: number;
  if (binary !== undefined) multiplier = BINARY_SI[binary] ?? Number.NaN;
  else if (exponent !== undefined) multiplier = 10 ** Number(exponent.slice(1));
  else multiplier = DECIMAL_SI[decimal ?? ""] ?? Number.NaN;
  const result = base * multiplier;
  if (sign === "-" && result !== 0) throw new QuantityError(`${describeInput(value)} is negative`);
  if (!Number.isFinite(result)) throw new QuantityError(`${describeInput(value)} is out of range`);
  return result;
}

function suggestion(text: string): string {
  const habit = HABIT_RE.exec(text);
  if (habit) {
    const [, amount, prefix = "", binary] = habit;
    const isKilo = prefix.toLowerCase() === "k";
    const binaryUnit = `${amount}${isKilo ? "K" : prefix.toUpperCase()}i`;
    const decimalUnit = `${amount}${isKilo ? "k" : prefix.toUpperCase()}`;
    return binary ? ` (did you mean ${binaryUnit}?)` : ` (did you mean ${binaryUnit} or ${decimalUnit}?)`;
  }
  if (text === "") return " (empty)";
  return " (expected a number with an optional suffix, e.g. 2, 500m, 12Gi, 512Mi, 16G)";
}

/**
 * Parses a CPU quantity into millicores: "1" → 1000, "500m" → 500, 2 → 2000, 0.5 → 500.
 * @throws QuantityError for garbage, negatives, or precision finer than 1m (the API server's resolution).
 */
export function parseCpuQuantity(value: QuantityInput): number {
  const cores = parseQuantity(value);
  const millicores = cores * 1000;
  const rounded = Math.round(millicores);
  if (Math.abs(millicores - rounded) > 1e-6) {
    throw new QuantityError(
      `${describeInput(value)} is finer than 1m (one thousandth of a CPU), the smallest CPU unit Kubernetes accepts`,
    );
  }
  if (!Number.isSafeInteger(rounded)) throw new QuantityError(`${describeInput(value)} is out of range`);
  return rounded;
}

/**
 * Parses a memory quantity into bytes: "12Gi" → 12884901888, "16G" → 16000000000.
 * Fractions of a byte round up, as the API server does.
 * @throws QuantityError for garbage, negatives, and the "m" (milli) suffix, which for memory is
 * almost always a typo for "Mi".
 */
export function parseMemoryQuantity(value: QuantityInput): number {
  if (typeof value === "string" && /^[+-]?(\d+(\.\d*)?|\.\d+)m$/.test(value.trim())) {
    throw new QuantityError(
      `${describeInput(value)} is in millibytes ("m"); did you mean ${value.trim().slice(0, -1)}Mi?`,
    );
  }
  const bytes = Math.ceil(parseQuantity(value) - 1e-9);
  if (!Number.isSafeInteger(bytes)) throw new QuantityError(`${describeInput(value)} is out of range`);
  return Math.max(bytes, 0);
}

/** Renders bytes for people: 12884901888 → "12Gi", 1536 → "1.5Ki", 1000 → "1000B". */
export function formatBytes(bytes: number): string {
  const units = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"] as const;
  for (const unit of units) {
    const size = BINARY_SI[unit] ?? 1;
    if (bytes >= size) {
      const amount = bytes / size;
      return `${Number.isInteger(amount) ? amount : amount.toFixed(2).replace(/\.?0+$/, "")}${unit}`;
    }
  }
  return `${bytes}B`;
}

/** Renders millicores for people: 1000 → "1", 1500 → "1.5", 250 → "250m". */
export function formatMillicores(millicores: number): string {
  if (millicores % 1000 === 0) return String(millicores / 1000);
  if (millicores > 1000) return String(Number((millicores / 1000).toFixed(3)));
  return `${millicores}m`;
}
