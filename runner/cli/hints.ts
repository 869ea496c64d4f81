/** How to open a run directory from the analyst's tools, printed after a run. */
export function analysisHints(dir: string): string {
  return [
    'open it with:',
    `  pandas:  import pyarrow.feather as f; m = f.read_table("${dir}/metrics.arrow").to_pandas()`,
    `  polars:  import polars as pl; m = pl.read_ipc("${dir}/metrics.arrow")`,
    `  DuckDB:  import duckdb, pyarrow.feather as f; t = f.read_table("${dir}/metrics.arrow"); duckdb.sql("select * from t")`,
    `  R:       m <- arrow::read_feather("${dir}/metrics.arrow")`,
    `  SQL:     npx socsim query ${dir} "select * from metrics"   (DuckDB; every table by name)`,
    `  Parquet: npx socsim export ${dir} --format parquet`,
    `  here:    npx socsim inspect ${dir}`,
    `  dashboard: npx socsim serve ${dir}   (then open http://127.0.0.1:7070/)`,
    '',
  ].join('\n');
}
