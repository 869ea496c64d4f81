/**
 * `socsim export DIR --format parquet` and `socsim query DIR "SQL"`: run tables where analysts work.
 * The encoder (parquet-wasm) and DuckDB load only when these commands run, not with every `socsim run`.
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { intFlag } from './flags.ts';

export function registerAnalysisCommands(program: Command): void {
  program
    .command('export')
    .description('Write every table of a run, experiment or calibration directory as Parquet (ZSTD, categorical columns dictionary-encoded), one .parquet file per .arrow file at the same relative path')
    .argument('<dir>', 'a run, experiment or calibration directory')
    .addOption(new Option('--format <format>', 'output format').choices(['parquet']).makeOptionMandatory())
    .option('--out <dir>', 'where the files go (default: <dir>-parquet); must be new or empty (see --force)')
    .option('--force', 'overwrite the files of an earlier export in --out')
    .action(async (dirArg: string, opts: { out?: string; force?: boolean }) => {
      const { exportParquet } = await import('../analysis/parquetExport.ts');
      const r = await exportParquet(dirArg, opts.out, !!opts.force, (line) => process.stderr.write(`${line}\n`));
      const rel = path.relative(process.cwd(), r.out) || '.';
      process.stdout.write(`wrote ${r.files} Parquet files (${(r.bytes / 1e6).toFixed(2)} MB) for ${r.tables.length} tables (${r.tables.map((t) => t.name).join(', ')}) to ${rel.startsWith('..') ? r.out : rel}/\n`);
    });

  program
    .command('query')
    .description('Run SQL over a run, experiment or calibration directory on embedded DuckDB; every table is a view by name (metrics, posts, cascades, interventions, agents with a step column, ...; an experiment\'s summary, effects, series, and its runs\' tables with a run column)')
    .argument('<dir>', 'a run, experiment or calibration directory')
    .argument('<sql>', 'one SQL statement, e.g. "select step, posts from metrics"')
    .option('--csv [file]', 'write every row as CSV to FILE (no FILE: to stdout) instead of a table')
    .option('--parquet <file>', 'write every row as Parquet to FILE instead of a table')
    .option('--max-rows <n>', 'rows printed as a table', intFlag('--max-rows', 1), 50)
    .action(async (dirArg: string, sql: string, opts: { csv?: string | true; parquet?: string; maxRows: number }) => {
      const { runQuery } = await import('../analysis/query.ts');
      await runQuery(dirArg, sql, { csv: opts.csv === true ? '-' : opts.csv, parquet: opts.parquet, maxRows: opts.maxRows, progress: (line) => process.stderr.write(`${line}\n`) });
    });
}
