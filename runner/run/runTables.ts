/**
 * The tables of a run, experiment or calibration directory, by name, for `socsim export` and
 * `socsim query`. A table is one or more Arrow IPC files with the same columns:
 *
 * - a run directory (manifest.json): every top-level `NAME.arrow` is the table NAME (`-` becomes
 *   `_`: graph-end.arrow is `graph_end`), and the snapshots agents/step-NNNNNN.arrow together are
 *   the table `agents`, with the snapshot's step as a column `step`;
 * - any other directory (an experiment's, socsim validate's, a calibration's): its top-level
 *   `NAME.arrow` files (summary, effects, series; calibration, target) and, for every run directory
 *   under runs/, that run's tables, all runs together, with the run's id as a column `run`;
 * - a folder `socsim export` wrote (Parquet): the same tables from the same layout, each file
 *   `NAME.parquet` where the directory it was exported from had `NAME.arrow` (an export holds no
 *   manifest.json: a run directory under runs/ is one that holds a .parquet file).
 *
 * Files are listed in a fixed order (snapshots by step, runs by id), so exports and queries do not
 * depend on the order the file system lists them in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../sim-core/errors.ts';

export interface TableFile {
  /** Path relative to the directory, e.g. `runs/a-s1/agents/step-000006.arrow` (or `.parquet`, exported). */
  rel: string;
  /** The run it belongs to (its directory name under runs/), for tables that gather runs. */
  run?: string;
  /** The snapshot step, for agent snapshots. */
  step?: number;
}

export interface RunTable {
  name: string;
  files: TableFile[];
  /** Extra key columns the table gets from where its files are: `run`, `step`. */
  keys: Array<'run' | 'step'>;
}

export type DirKind = 'run' | 'collection';

const SNAPSHOT = /^step-(\d{6,})\.(?:arrow|parquet)$/;
const TABLE_FILE = /^([A-Za-z0-9][A-Za-z0-9_-]*)\.(?:arrow|parquet)$/;

export const tableName = (file: string) => file.replace(/\.(arrow|parquet)$/, '').replace(/-/g, '_');

/** Whether `rel` is a Parquet file (of an exported directory) rather than Arrow IPC. */
export const isParquet = (rel: string) => rel.endsWith('.parquet');

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The tables of one run directory (or of the top of any directory: its files and an exported run's
 * agents/); `prefix` is its path relative to the listed directory, `label` names it in messages.
 */
function runTables(dir: string, prefix: string, label: string, run?: string): Map<string, TableFile[]> {
  const out = new Map<string, TableFile[]>();
  const add = (name: string, f: TableFile) => out.set(name, [...(out.get(name) ?? []), f]);
  for (const f of fs.readdirSync(dir).sort(byName)) {
    if (!TABLE_FILE.test(f) || !fs.statSync(path.join(dir, f)).isFile()) continue;
    const name = tableName(f);
    const other = out.get(name)?.[0]?.rel;
    if (other) throw new InputError(`${label}: ${path.posix.basename(other)} and ${f} in ${prefix || '.'} would both be the table ${name}; keep one`);
    add(name, { rel: path.posix.join(prefix, f), ...(run !== undefined && { run }) });
  }
  const agents = path.join(dir, 'agents');
  if (fs.existsSync(agents) && fs.statSync(agents).isDirectory()) {
    const snaps = fs.readdirSync(agents).flatMap((f) => {
      const m = SNAPSHOT.exec(f);
      return m ? [{ f, step: Number(m[1]) }] : [];
    });
    snaps.sort((a, b) => a.step - b.step);
    for (const s of snaps) add('agents', { rel: path.posix.join(prefix, 'agents', s.f), step: s.step, ...(run !== undefined && { run }) });
  }
  return out;
}

/** What `dir` is and its tables; a directory that is neither a run nor holds tables is bad input. */
export function listTables(dir: string, label = dir): { kind: DirKind; tables: RunTable[] } {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new InputError(`${label} is not a directory; give a run directory (socsim run --out DIR) or an experiment directory (socsim experiment FILE --out DIR)`);
  }
  const top = [...runTables(dir, '', label)].map(([name, files]): RunTable => ({ name, files, keys: name === 'agents' ? ['step'] : [] }));
  if (fs.existsSync(path.join(dir, 'manifest.json'))) return { kind: 'run', tables: top };
  const tables = new Map(top.map((t) => [t.name, t]));
  const runsDir = path.join(dir, 'runs');
  if (fs.existsSync(runsDir) && fs.statSync(runsDir).isDirectory()) {
    for (const id of fs.readdirSync(runsDir).sort(byName)) {
      const rd = path.join(runsDir, id);
      if (!fs.statSync(rd).isDirectory() || !(fs.existsSync(path.join(rd, 'manifest.json')) || fs.readdirSync(rd).some(isParquet))) continue;
      for (const [name, files] of runTables(rd, `runs/${id}`, label, id)) {
        let t = tables.get(name);
        if (t && !t.keys.includes('run')) throw new InputError(`${label}: ${name}.arrow at the top and runs/*/${name}.arrow would both be the table ${name}; rename the top-level file`);
        if (!t) tables.set(name, (t = { name, files: [], keys: name === 'agents' ? ['run', 'step'] : ['run'] }));
        t.files.push(...files);
      }
    }
  }
  if (tables.size === 0) {
    throw new InputError(`${label} holds no tables (no manifest.json, no .arrow or .parquet files, no runs/<id>/ run directories); give a run, experiment or calibration directory, or a folder socsim export wrote`);
  }
  return { kind: 'collection', tables: [...tables.values()] };
}
