/**
 * Strict parser of `nvidia-smi --query-gpu=… --format=csv` output.
 *
 * The field list lives here, once, and is used both to build the command line and to read the answer, so the
 * two cannot drift apart. What the parser accepts, and why:
 *
 * - Values are separated by exactly `, ` and are NOT quoted: nvidia-smi prints names raw (see the captures in
 *   test/fixtures/nvidia-smi; other tools that parse its CSV had to work around unquoted commas, e.g.
 *   leptonai/gpud#181). A GPU name is the only free-text column we read, so when a line has more cells than
 *   columns and a `name` column exists, the surplus is folded back into the name.
 * - A header line (what `--format=csv` without `noheader` prints) is tolerated explicitly: when the first
 *   line names the columns, the columns are taken from it (so captures made with other field lists parse too).
 *   Without a header the caller says which fields were asked for (default: QUERY_GPU_FIELDS).
 * - Units (what `--format=csv` without `nounits` prints: `754 MiB`, `100 %`) are tolerated explicitly, but
 *   only the unit nvidia-smi uses for that field (MiB for memory.*, % for utilization.*); `754 GB` is an error.
 * - Any value wholly in brackets (`[N/A]`, `[Not Supported]`, `[Insufficient Permissions]`, `[Unknown Error]`,
 *   `[Requested functionality has been deprecated]`, …) and a bare `N/A` (older drivers) mean "no value": null.
 * - Anything else that does not fit its column — wrong cell count, text in a number column, a malformed UUID —
 *   throws a QueryGpuParseError naming the line number and quoting the line.
 */

/** The fields GPU Share asks nvidia-smi for, in order. */
export const QUERY_GPU_FIELDS = [
  'index',
  'uuid',
  'name',
  'memory.total',
  'memory.used',
  'memory.free',
  'utilization.gpu',
  'temperature.gpu',
  'driver_version',
] as const;

/** The cheaper subset the live monitor polls every couple of seconds. */
export const LIVE_GPU_FIELDS = ['index', 'uuid', 'memory.used', 'memory.free', 'utilization.gpu', 'temperature.gpu'] as const;

/** Command-line arguments that ask nvidia-smi for `fields` in the format this parser reads fastest. */
export function queryGpuArgs(fields: readonly string[] = QUERY_GPU_FIELDS): string[] {
  return [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'];
}

/** One GPU as nvidia-smi described it; null where the field was not asked for or nvidia-smi had no value. */
export interface ParsedGpuRow {
  /** 1-based line of the output this row came from. */
  line: number;
  index: number | null;
  uuid: string | null;
  name: string | null;
  memoryTotalMib: number | null;
  memoryUsedMib: number | null;
  memoryFreeMib: number | null;
  utilizationGpuPct: number | null;
  temperatureC: number | null;
  driverVersion: string | null;
}

/** Thrown for output that is not what the query asked for; carries the line so the message can quote it. */
export class QueryGpuParseError extends Error {
  constructor(
    readonly lineNumber: number,
    readonly lineText: string,
    problem: string,
  ) {
    super(`nvidia-smi --query-gpu output, line ${lineNumber}: ${problem}: "${truncate(lineText, 160)}"`);
    this.name = 'QueryGpuParseError';
  }
}

type RowKey = Exclude<keyof ParsedGpuRow, 'line'>;

interface FieldSpec {
  key: RowKey;
  kind: 'int' | 'uuid' | 'text' | 'version';
  /** The only unit nvidia-smi prints for this field, when it prints one. */
  unit?: string;
  min?: number;
  max?: number;
}

// Field names nvidia-smi accepts for the same value (gpu_uuid = uuid, gpu_name = name) map to one key.
const FIELD_SPECS: Record<string, FieldSpec> = {
  index: { key: 'index', kind: 'int', min: 0 },
  uuid: { key: 'uuid', kind: 'uuid' },
  gpu_uuid: { key: 'uuid', kind: 'uuid' },
  name: { key: 'name', kind: 'text' },
  gpu_name: { key: 'name', kind: 'text' },
  'memory.total': { key: 'memoryTotalMib', kind: 'int', unit: 'MiB', min: 0 },
  'memory.used': { key: 'memoryUsedMib', kind: 'int', unit: 'MiB', min: 0 },
  'memory.free': { key: 'memoryFreeMib', kind: 'int', unit: 'MiB', min: 0 },
  'utilization.gpu': { key: 'utilizationGpuPct', kind: 'int', unit: '%', min: 0, max: 100 },
  'temperature.gpu': { key: 'temperatureC', kind: 'int', min: -100, max: 300 },
  driver_version: { key: 'driverVersion', kind: 'version' },
};

const HEADER_CELL = /^([A-Za-z_][\w.]*)(?: \[([^\]]+)\])?$/;
const UUID = /^(?:GPU|MIG)-[0-9A-Za-z][0-9A-Za-z\-/]*$/;
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.\-_]*$/;

/**
 * Parses query-gpu CSV. `fields` is the field list the query asked for; a header line in `text`, when present,
 * takes precedence because it is nvidia-smi's own statement of the columns. Blank lines (the trailing newline,
 * CRLF endings on Windows) are skipped. Throws QueryGpuParseError for anything else that does not fit.
 */
export function parseQueryGpuCsv(text: string, fields: readonly string[] = QUERY_GPU_FIELDS): ParsedGpuRow[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  let columns: string[] = [...fields];
  let headerUnits: (string | null)[] = columns.map(() => null);
  const rows: ParsedGpuRow[] = [];
  let seenContent = false;

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const lineNumber = i + 1;
    if (raw.trim() === '') continue;
    const cells = raw.split(', ');
    if (!seenContent) {
      seenContent = true;
      const header = readHeader(cells);
      if (header) {
        columns = header.names;
        headerUnits = header.units;
        continue;
      }
    }
    rows.push(parseRow(cells, raw, lineNumber, columns, headerUnits));
  }
  return rows;
}

/** A first line is a header when every cell is a field name (optionally with `[unit]`) and one is a field we read. */
function readHeader(cells: string[]): { names: string[]; units: (string | null)[] } | null {
  const names: string[] = [];
  const units: (string | null)[] = [];
  for (const cell of cells) {
    const m = HEADER_CELL.exec(cell.trim());
    if (!m) return null;
    names.push(m[1]!);
    units.push(m[2] ?? null);
  }
  return names.some((n) => n in FIELD_SPECS) ? { names, units } : null;
}

function parseRow(
  cellsIn: string[],
  raw: string,
  lineNumber: number,
  columns: string[],
  headerUnits: (string | null)[],
): ParsedGpuRow {
  let cells = cellsIn;
  if (cells.length > columns.length) {
    const nameAt = columns.findIndex((c) => FIELD_SPECS[c]?.key === 'name');
    if (nameAt === -1) {
      throw new QueryGpuParseError(lineNumber, raw, `expected ${columns.length} values (${columns.join(', ')}), got ${cells.length}`);
    }
    const surplus = cells.length - columns.length;
    cells = [...cells.slice(0, nameAt), cells.slice(nameAt, nameAt + surplus + 1).join(', '), ...cells.slice(nameAt + surplus + 1)];
  }
  if (cells.length !== columns.length) {
    throw new QueryGpuParseError(lineNumber, raw, `expected ${columns.length} values (${columns.join(', ')}), got ${cells.length}`);
  }
  const row: ParsedGpuRow = {
    line: lineNumber,
    index: null,
    uuid: null,
    name: null,
    memoryTotalMib: null,
    memoryUsedMib: null,
    memoryFreeMib: null,
    utilizationGpuPct: null,
    temperatureC: null,
    driverVersion: null,
  };
  const assigned = row as unknown as Record<RowKey, string | number | null>;
  columns.forEach((column, c) => {
    const spec = FIELD_SPECS[column];
    if (!spec) return; // a column we do not read (the header named it, or the caller asked for it)
    const value = cells[c]!.trim();
    if (isPlaceholder(value)) return;
    assigned[spec.key] = readValue(spec, column, value, headerUnits[c] ?? null, lineNumber, raw);
  });
  return row;
}

/** nvidia-smi's "no value" forms: anything wholly in brackets, and the bare `N/A` of older drivers. */
export function isPlaceholder(value: string): boolean {
  return value === 'N/A' || /^\[[^\]]*\]$/.test(value);
}

function readValue(spec: FieldSpec, column: string, value: string, headerUnit: string | null, lineNumber: number, raw: string): string | number {
  const fail = (why: string): never => {
    throw new QueryGpuParseError(lineNumber, raw, `${column} ${why}, got "${truncate(value, 60)}"`);
  };
  switch (spec.kind) {
    case 'int': {
      let digits = value;
      const unit = spec.unit ?? headerUnit;
      if (unit && digits.endsWith(` ${unit}`)) digits = digits.slice(0, -(unit.length + 1));
      if (!/^-?\d{1,12}$/.test(digits)) fail(`must be a whole number${spec.unit ? ` (optionally followed by " ${spec.unit}")` : ''}`);
      const n = Number(digits);
      if (spec.min !== undefined && n < spec.min) fail(`must be at least ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) fail(`must be at most ${spec.max}`);
      return n;
    }
    case 'uuid':
      if (!UUID.test(value)) fail('must look like GPU-… or MIG-…');
      return value;
    case 'version':
      if (!VERSION.test(value)) fail('must look like a driver version such as 550.54.14');
      return value;
    case 'text':
      if (value === '') fail('must not be empty');
      return value;
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
