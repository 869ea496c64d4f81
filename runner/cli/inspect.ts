/** `socsim inspect`: a readable summary of a run directory or of an experiment directory. */
import fs from 'node:fs';
import path from 'node:path';
import { arrowFileSummary } from '../../sim-core/io/arrowFile.ts';
import { InputError } from '../../sim-core/errors.ts';
import { effectiveStatus, readRunManifest, runFilesDamage, writerState, type Manifest } from '../run/runDirectory.ts';
import { readExperimentJson } from '../experiment/experimentPlan.ts';
import { checkCheckpoints, hasCheckpoint, unusable, type CheckpointState } from '../run/resume.ts';

/** What a run file holds: an Arrow table's rows and columns, another file's size. */
function describeFile(file: string): string {
  if (!fs.existsSync(file)) return 'missing';
  if (!file.endsWith('.arrow')) return `${fs.statSync(file).size} bytes`;
  try {
    return describeArrow(file);
  } catch (e) {
    return `unreadable (${(e as Error).message})`;
  }
}

/** `socsim inspect` of an experiment directory: its plan, how many runs are complete, its tables. */
function inspectExperiment(dir: string): string {
  const json = readExperimentJson(dir);
  if (!json) throw new InputError(`${dir}/experiment.json is not a socsim experiment plan; pass the folder socsim experiment wrote`);
  const complete = json.runs.filter((r) => readRunManifest(path.join(dir, r.dir))?.status === 'completed').length;
  const lines = [
    `experiment ${path.resolve(dir)}`,
    `name       ${json.name} (${json.file}): ${json.description}`,
    `scenario   ${json.scenario}; ${json.options.agents} agents, ${json.options.steps} steps of ${json.options.step_seconds} s`,
    `arms       ${json.arms.join(', ')} (reference ${json.reference})${Object.keys(json.grid).length ? `; grid ${JSON.stringify(json.grid)}` : ''}`,
    `seeds      ${json.seeds.length} (${json.seeds[0]}..${json.seeds[json.seeds.length - 1]})`,
    `runs       ${complete} of ${json.runs.length} complete${complete < json.runs.length ? `; finish them with: socsim experiment ${json.file} --out ${dir}` : ''}`,
    `outcomes   ${json.outcomes.join(', ')}`,
    'tables:',
    ...['summary.arrow', 'effects.arrow', 'series.arrow'].map((t) => `  ${t}: ${fs.existsSync(path.join(dir, t)) ? describeArrow(path.join(dir, t)) : 'not written yet (written when every run is complete)'}`),
  ];
  return lines.join('\n') + '\n';
}

function describeArrow(file: string): string {
  const { schema, rows } = arrowFileSummary(file);
  const cols = schema.fields.map((f) => `${f.name}:${String(f.type)}`).join(', ');
  return `${rows} rows; ${cols}`;
}

/**
 * What a resume of an interrupted or failed run would do, verifying its checkpoint files (a full
 * read of each): resume from the newest, fall back to the previous one (saying what is wrong with
 * the newest), or nothing, and why.
 */
function resumeAdvice(dir: string): string {
  if (!hasCheckpoint(dir)) return 'no checkpoint to resume from';
  const { newest, previous } = checkCheckpoints(dir);
  const resume = (c: CheckpointState) => ('step' in c ? `resume from step ${c.step} with: socsim run --resume ${dir}` : '');
  if ('step' in newest) return resume(newest);
  const bad = `${newest.name} ${unusable(newest.error)}`;
  if (!previous) return `${bad} and there is no previous checkpoint: nothing to resume from`;
  if ('step' in previous) return `${bad}; the previous checkpoint, ${previous.name}, is good: ${resume(previous)}`;
  return `${bad} and the previous one, ${previous.name}, ${unusable(previous.error)}: nothing to resume from`;
}

/** The status, with what a reader can do about it: a dead "running" run was interrupted. */
function statusLine(m: Manifest, dir: string): string {
  const status = effectiveStatus(m, dir);
  let line = status + (m.error ? `: ${m.error}` : '');
  if (m.status === 'running' && status === 'interrupted') line += ` (process ${m.pid} is gone)`;
  else if (m.status === 'running' && writerState(m, dir) === 'unknown' && m.host) line += ` (on ${m.host}, process ${m.pid ?? '?'}; cannot check from here)`;
  if (status === 'interrupted' || status === 'failed') line += `; ${resumeAdvice(dir)}`;
  return line;
}

export function inspectRun(dir: string): string {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestFile) && fs.existsSync(path.join(dir, 'experiment.json'))) return inspectExperiment(dir);
  if (!fs.existsSync(manifestFile)) throw new InputError(`${dir} is not a run or experiment directory (no manifest.json or experiment.json); pass the folder socsim run or socsim experiment wrote`);
  let m: Manifest;
  try {
    m = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
  } catch (e) {
    throw new InputError(`${manifestFile} is not valid JSON (${(e as Error).message})`);
  }
  const walls = [...m.step_wall_ms].sort((a, b) => a - b);
  const med = walls.length ? walls[Math.floor(walls.length / 2)] : NaN;
  const lines = [
    `run        ${path.resolve(dir)}`,
    `scenario   ${m.scenario.name} (${m.scenario.file})`,
    `status     ${statusLine(m, dir)}`,
    `size       ${m.agents} agents, ${m.edges} edges (${m.directed ? 'directed' : 'undirected'})`,
    `steps      ${m.steps_completed}/${m.steps_requested}, median ${med.toFixed(1)} ms/step, set-up ${m.setup_seconds.toFixed(1)} s`,
    `seed       ${m.seed}   threads ${m.threads}   backend ${m.backend}${m.adapter ? ` (${m.adapter})` : ''}`,
    `parameters ${JSON.stringify(m.parameters)}`,
  ];
  const g = m.graph_file;
  if (g) lines.push(`graph file ${g.path} (${g.format}, ${g.bytes} bytes, sha256 ${g.sha256}; ids ${g.ids}, ${g.directed ? 'directed' : 'undirected'}; dropped ${g.dropped.self_loops} self loops, ${g.dropped.duplicates} duplicates)`);
  if (m.checkpoint) lines.push(`checkpoint after step ${m.checkpoint.step}: ${m.checkpoint.file}, ${m.checkpoint.bytes} bytes${m.checkpoint.seconds === undefined ? '' : `, written in ${m.checkpoint.seconds} s`}`);
  if (m.checkpoint_error) lines.push(`checkpoint failed: ${m.checkpoint_error}`);
  for (const r of m.resumed ?? []) lines.push(`resumed    from step ${r.from_step} at ${r.at}${r.backend ? ` on ${r.backend}, ${r.threads} threads` : ''}`);
  const damage = m.status === 'completed' && m.file_bytes ? runFilesDamage(dir, m) : undefined;
  if (damage) lines.push(`damaged    ${damage} (the completion record says otherwise; run it again)`);
  lines.push('files:');
  // Every file the run lists: metrics, graph, the end graph, the other tables and logs, snapshots.
  const files = [m.files.metrics, m.files.graph, ...(m.files.graph_end ? [m.files.graph_end] : []), ...(m.files.other ?? []), ...m.files.agents];
  for (const f of files) lines.push(`  ${f}: ${describeFile(path.join(dir, f))}`);
  return lines.join('\n') + '\n';
}
