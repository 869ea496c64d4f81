/**
 * docs/run-directory.md, generated: the prose comes from templates/run-directory.md, and every
 * file and column list from the files that small sample runs write (their Arrow schemas), with
 * each column's meaning from runner/run/columnDocs.ts and the manifest's fields from the doc comments
 * of the `Manifest` interface. A column without a meaning, or a meaning for a column no file has,
 * is an error naming both, so the page cannot drift from the writers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataType, Schema } from 'apache-arrow';
import { arrowFileSummary } from '../../sim-core/io/arrowRead.ts';
import { CALIBRATION_FILE_DOCS, EXPERIMENT_FILE_DOCS, METRIC_DOCS, RUN_FILE_DOCS, type FileDoc } from '../../runner/run/columnDocs.ts';
import { sampleRuns, type SampleDirs } from './sampleRuns.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MANIFEST_SOURCE = 'runner/run/runDirectory.ts';

/** Arrow type as the page shows it. */
function typeName(t: DataType): string {
  const s = String(t);
  const dict = /^Dictionary<\w+, Utf8>$/.exec(s);
  if (dict) return 'string (dictionary)';
  const list = /^FixedSizeList\[(\d+)\]<(\w+)>$/.exec(s);
  if (list) return `${list[1]} x ${list[2].toLowerCase()}`;
  return s.toLowerCase().replace(/^int/, 'i').replace(/^uint/, 'u').replace(/^float/, 'f');
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

function schemaOf(file: string): Schema {
  return arrowFileSummary(file).schema;
}

/**
 * A table of one file's columns. `extra` names the meaning of columns the doc does not list (the
 * outcomes of summary.arrow, the fitted parameters of calibration.arrow); without it such a column
 * is an error.
 */
function columnTable(label: string, schema: Schema, doc: FileDoc, problems: string[], extra?: string): string[] {
  const rows = schema.fields.map((f) => {
    const meaning = doc.columns[f.name] ?? extra;
    if (meaning === undefined) problems.push(`${label}: column ${f.name} has no meaning in runner/run/columnDocs.ts`);
    return `| \`${f.name}\` | ${typeName(f.type)} | ${cell(meaning ?? '')} |`;
  });
  for (const name of Object.keys(doc.columns)) {
    if (!schema.fields.some((f) => f.name === name)) problems.push(`${label}: runner/run/columnDocs.ts documents a column ${name} that the file does not have`);
  }
  return ['| column | type | meaning |', '| --- | --- | --- |', ...rows];
}

function fileSection(name: string, file: string, doc: FileDoc, problems: string[], extra?: string): string[] {
  return [`### ${name}`, '', doc.about, '', ...columnTable(name, schemaOf(file), doc, problems, extra), ''];
}

/**
 * A file every sample run writes, whose columns depend on the scenario (metrics.arrow, the agent
 * snapshots): the union of their columns, each with the scenarios that write it.
 */
function scenarioColumns(s: SampleDirs, rel: string, label: string, docs: Readonly<Record<string, string>>, problems: string[]): string[] {
  const runs = [{ scenario: 'social-feed', dir: s.social, llm: false }, { scenario: 'social-feed', dir: s.llm, llm: true }, ...Object.entries(s.classic).map(([scenario, dir]) => ({ scenario, dir, llm: false }))];
  const scenarios = new Set(runs.map((r) => r.scenario));
  const seen = new Map<string, { type: string; scenarios: Set<string>; offline: boolean }>();
  for (const r of runs) {
    for (const f of schemaOf(path.join(r.dir, rel)).fields) {
      const m = seen.get(f.name) ?? { type: typeName(f.type), scenarios: new Set<string>(), offline: false };
      m.scenarios.add(r.scenario);
      m.offline ||= !r.llm;
      seen.set(f.name, m);
    }
  }
  const rows = [...seen].map(([name, m]) => {
    const meaning = docs[name];
    if (meaning === undefined) problems.push(`${label}: column ${name} has no meaning in runner/run/columnDocs.ts`);
    const who = (m.scenarios.size === scenarios.size ? 'all' : [...m.scenarios].join(', ')) + (m.offline ? '' : ' with --llm openai or replay');
    return `| \`${name}\` | ${m.type} | ${who} | ${cell(meaning ?? '')} |`;
  });
  for (const name of Object.keys(docs)) if (!seen.has(name)) problems.push(`${label}: runner/run/columnDocs.ts documents a column ${name} that no bundled scenario writes`);
  return ['| column | type | written by | meaning |', '| --- | --- | --- | --- |', ...rows];
}

function metricsSection(s: SampleDirs, problems: string[]): string[] {
  return ['### metrics.arrow', '', RUN_FILE_DOCS['metrics.arrow'].about, '', ...scenarioColumns(s, 'metrics.arrow', 'metrics.arrow', METRIC_DOCS, problems), ''];
}

function agentsSection(s: SampleDirs, problems: string[]): string[] {
  const doc = RUN_FILE_DOCS['agents/step-NNNNNN.arrow'];
  return ['### agents/step-NNNNNN.arrow', '', doc.about, '', ...scenarioColumns(s, path.join('agents', 'step-000000.arrow'), 'agents/step-NNNNNN.arrow', doc.columns, problems), ''];
}

/** The fields of the `Manifest` interface with their doc comments. */
export function manifestFields(source: string): Array<{ name: string; doc: string }> {
  const start = source.indexOf('export interface Manifest {');
  const body = source.slice(start, source.indexOf('\n}\n', start)).split('\n').slice(1);
  const out: Array<{ name: string; doc: string }> = [];
  let doc: string[] = [];
  let inDoc = false;
  for (const line of body) {
    const t = line.trim();
    if (t.startsWith('/**')) inDoc = true;
    if (inDoc) {
      doc.push(t.replace(/^\/\*\*\s?/, '').replace(/\*\/$/, '').replace(/^\*\s?/, '').trim());
      if (t.endsWith('*/')) inDoc = false;
      continue;
    }
    const m = /^ {2}([a-z_]+)\??:/.exec(line);
    if (m) {
      out.push({ name: m[1], doc: doc.filter(Boolean).join(' ') });
      doc = [];
    }
  }
  return out;
}

function manifestSection(problems: string[]): string[] {
  const fields = manifestFields(fs.readFileSync(path.join(ROOT, MANIFEST_SOURCE), 'utf8'));
  for (const f of fields) if (!f.doc) problems.push(`manifest.json: field ${f.name} has no doc comment in ${MANIFEST_SOURCE} (interface Manifest)`);
  return ['| field | meaning |', '| --- | --- |', ...fields.map((f) => `| \`${f.name}\` | ${cell(f.doc)} |`)];
}

/** The generated blocks, by the name their placeholder has in the template. */
async function blocks(): Promise<Record<string, string[]>> {
  const s = await sampleRuns();
  try {
    const problems: string[] = [];
    const runFiles = ['graph.arrow', 'graph-end.arrow', 'posts.arrow', 'cascades.arrow', 'conversations.arrow', 'interventions.arrow', 'stories.arrow', 'events.arrow', 'notes.arrow', 'note-ratings.arrow', 'note-status.arrow'];
    const run = [
      ...metricsSection(s, problems),
      ...agentsSection(s, problems),
      ...runFiles.flatMap((f) => fileSection(f, path.join(s.social, f), RUN_FILE_DOCS[f], problems)),
      ...fileSection('archetypes.arrow', path.join(s.llm, 'archetypes.arrow'), RUN_FILE_DOCS['archetypes.arrow'], problems),
    ];
    const exp = Object.entries(EXPERIMENT_FILE_DOCS).flatMap(([f, doc]) => fileSection(f, path.join(s.experiment, f), doc, problems, f === 'summary.arrow' ? 'an outcome of the experiment file' : undefined));
    const cal = Object.entries(CALIBRATION_FILE_DOCS).flatMap(([f, doc]) => fileSection(f, path.join(s.calibration, f), doc, problems, f === 'calibration.arrow' ? 'a fitted parameter' : 'a matched metric of the target'));
    const manifest = manifestSection(problems);
    if (problems.length > 0) throw new Error(`the run-directory reference is incomplete:\n  ${problems.join('\n  ')}`);
    return { 'run-files': run, manifest, 'experiment-files': exp, 'calibration-files': cal };
  } finally {
    s.cleanup();
  }
}

/** The page's Markdown. */
export async function runDirectoryReference(): Promise<string> {
  const template = fs.readFileSync(path.join(ROOT, 'scripts', 'docs', 'templates', 'run-directory.md'), 'utf8');
  const b = await blocks();
  return template.replace(/^<!-- block: ([a-z-]+) -->$/gm, (_, name: string) => {
    if (!b[name]) throw new Error(`templates/run-directory.md: no generated block ${name}`);
    return b[name].join('\n').trimEnd();
  });
}
