/**
 * Arrow IPC edge lists (file or stream format). Columns `source`/`target`, else `src`/`dst`, else
 * `from`/`to` (case-insensitive), else the first two columns; integer, float, utf8 or
 * dictionary-of-utf8. `ids: 'int'`: integer columns, float columns holding whole numbers, and
 * string columns holding plain digits give integer ids. `ids: 'name'`: every id is a name (numbers
 * as their decimal text). Errors name the 1-based row.
 */
import { DataType, Precision, tableFromIPC } from 'apache-arrow';
import type { Table as ArrowTable, Vector } from 'apache-arrow';
import { InputError } from '../sim-core/errors.ts';
import { cleanEdges, type DenseEdges } from './cleanEdges.ts';
import {
  I32_MAX,
  K_BIG,
  K_FRAC,
  K_NEG,
  MAX_ID,
  badNumber,
  noEdges,
  notInteger,
  oneLine,
  outOfRange,
  tooManyEdges,
  type ReadConfig,
} from './edgeErrors.ts';
import { NameTable, remapNumeric } from './resolveIds.ts';

const ARROW_COLUMN_PAIRS: [string, string][] = [
  ['source', 'target'],
  ['src', 'dst'],
  ['from', 'to'],
];

type ColumnKind = 'int' | 'float' | 'string' | null;

function columnKind(type: unknown): ColumnKind {
  if (DataType.isInt(type)) return 'int';
  if (DataType.isFloat(type)) return type.precision === Precision.HALF ? null : 'float';
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type) || DataType.isUtf8View(type)) return 'string';
  if (DataType.isDictionary(type)) {
    const v = type.dictionary;
    if (DataType.isUtf8(v) || DataType.isLargeUtf8(v) || DataType.isUtf8View(v)) return 'string';
  }
  return null;
}

/** Reads the edges of the Arrow IPC bytes of file `cfg.path`. */
export function readArrowEdges(cfg: ReadConfig, bytes: Uint8Array): DenseEdges {
  const path = cfg.path;
  let table: ArrowTable;
  try {
    table = tableFromIPC(bytes);
  } catch (err) {
    throw new InputError(
      `cannot read Arrow file ${path}: ${oneLine((err as Error).message)}; write it as Arrow IPC (file or stream format), e.g. pyarrow.feather.write_feather`,
    );
  }
  const fields = table.schema.fields;
  const lower = fields.map((f) => f.name.toLowerCase());
  let pick: [number, number] | null = null;
  for (const [s, t] of ARROW_COLUMN_PAIRS) {
    const i = lower.indexOf(s);
    const j = lower.indexOf(t);
    if (i >= 0 && j >= 0) {
      pick = [i, j];
      break;
    }
  }
  if (pick === null && fields.length >= 2) pick = [0, 1];
  const listed = fields.slice(0, 8).map((f) => `${f.name}: ${String(f.type)}`);
  if (fields.length > 8) listed.push(`... ${fields.length - 8} more`);
  const found = fields.length === 0 ? 'no columns' : `found ${listed.join(', ')}`;
  const usage = `need two integer or string columns named source/target, src/dst or from/to, or as the first two columns`;
  if (pick === null) {
    throw new InputError(`Arrow file ${path} has no usable edge columns (${found}); ${usage}`);
  }
  const [si, ti] = pick;
  const sk = columnKind(fields[si].type);
  const tk = columnKind(fields[ti].type);
  if (sk === null || tk === null) {
    const bad = sk === null ? fields[si] : fields[ti];
    throw new InputError(
      `Arrow file ${path} has no usable edge columns: column ${JSON.stringify(bad.name)} is ${String(bad.type)} (${found}); ${usage}`,
    );
  }
  const m = table.numRows;
  if (m === 0) throw noEdges(cfg, 'the Arrow table has 0 rows');
  if (m > cfg.maxEdges) throw tooManyEdges(cfg, `row ${cfg.maxEdges + 1}`);
  const sv = table.getChildAt(si) as Vector;
  const tv = table.getChildAt(ti) as Vector;
  const sName = fields[si].name;
  const tName = fields[ti].name;
  for (const [vec, name] of [
    [sv, sName],
    [tv, tName],
  ] as [Vector, string][]) {
    if (vec.nullCount > 0) {
      let r = 0;
      while (r < m && vec.isValid(r)) r++;
      throw new InputError(`${path} row ${r + 1}: node id in column ${JSON.stringify(name)} is missing (null); drop the row or fill it in`);
    }
  }

  if (cfg.ids === 'name') {
    const sa = columnStrings(sv, sk, m);
    const ta = columnStrings(tv, tk, m);
    const names = new NameTable();
    const src = new Int32Array(m);
    const dst = new Int32Array(m);
    for (let r = 0; r < m; r++) {
      const s = sa[r];
      const t = ta[r];
      if (s === '' || t === '') {
        throw new InputError(`${path} row ${r + 1}: empty node id in column ${JSON.stringify(s === '' ? sName : tName)}; drop the row or fill it in`);
      }
      src[r] = names.internString(s);
      dst[r] = names.internString(t);
    }
    return cleanEdges(src, dst, m, names.n, names.names, cfg.directed);
  }

  const rs = sk === 'string' ? columnDigits(cfg, sv, sName, m) : columnNumbers(cfg, sv, m);
  const rt = tk === 'string' ? columnDigits(cfg, tv, tName, m) : columnNumbers(cfg, tv, m);
  let maxId = -1;
  for (let r = 0; r < m; r++) {
    if (rs[r] > maxId) maxId = rs[r];
    if (rt[r] > maxId) maxId = rt[r];
  }
  if (cfg.agents > 0) {
    const src = new Int32Array(m);
    const dst = new Int32Array(m);
    for (let r = 0; r < m; r++) {
      const s = rs[r];
      const t = rt[r];
      if (s >= cfg.agents) throw outOfRange(cfg, `row ${r + 1}`, s);
      if (t >= cfg.agents) throw outOfRange(cfg, `row ${r + 1}`, t);
      src[r] = s;
      dst[r] = t;
    }
    return cleanEdges(src, dst, m, cfg.agents, null, cfg.directed);
  }
  const narrow = maxId <= I32_MAX;
  const r = remapNumeric(narrow ? Int32Array.from(rs) : rs, narrow ? Int32Array.from(rt) : rt, m, maxId);
  return cleanEdges(r.src, r.dst, m, r.ids.length, r.ids, cfg.directed);
}

/** Any column -> its values as names (numbers as decimal text). */
function columnStrings(vec: Vector, kind: ColumnKind, m: number): string[] {
  const out: string[] = new Array(m);
  let r = 0;
  if (kind === 'string') for (const v of vec) out[r++] = v as string;
  else for (const v of vec) out[r++] = String(v);
  return out;
}

/** String column of plain digits -> Float64Array of validated ids (`ids: 'int'`). */
function columnDigits(cfg: ReadConfig, vec: Vector, column: string, m: number): Float64Array {
  const out = new Float64Array(m);
  let r = 0;
  for (const v of vec) {
    const s = v as string;
    const where = `row ${r + 1}`;
    if (/^\d+$/.test(s)) {
      const x = Number(s);
      if (x > MAX_ID) throw badNumber(cfg, where, K_BIG, s);
      out[r++] = x;
    } else if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) {
      throw badNumber(cfg, where, s.startsWith('-') ? K_NEG : K_FRAC, s);
    } else {
      throw notInteger(cfg, where, s, column);
    }
  }
  return out;
}

/** Numeric column -> Float64Array of validated ids (non-negative integers <= 2^53-1). */
function columnNumbers(cfg: ReadConfig, vec: Vector, m: number): Float64Array {
  const arr = vec.toArray() as ArrayLike<number | bigint>;
  const out = new Float64Array(m);
  if (arr instanceof BigInt64Array || arr instanceof BigUint64Array) {
    for (let r = 0; r < m; r++) {
      const x = arr[r];
      if (x < 0n) throw badNumber(cfg, `row ${r + 1}`, K_NEG, String(x));
      if (x > 9007199254740991n) throw badNumber(cfg, `row ${r + 1}`, K_BIG, String(x));
      out[r] = Number(x);
    }
    return out;
  }
  for (let r = 0; r < m; r++) {
    const x = arr[r] as number;
    if (!(x >= 0 && x <= MAX_ID && Number.isInteger(x))) {
      const kind = x < 0 ? K_NEG : x > MAX_ID && Number.isInteger(x) ? K_BIG : K_FRAC;
      throw badNumber(cfg, `row ${r + 1}`, kind, String(x));
    }
    out[r] = x;
  }
  return out;
}
