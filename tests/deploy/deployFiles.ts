/**
 * Readers for the files in deploy/ that cannot be run here (no container engine, no cluster):
 * the Containerfile's instructions by stage, the reference Node version of CI, and the flags
 * `socsim experiment` accepts, so that tests can check them against the repository.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, socsim } from '../runner/cliHelpers.ts';

export interface Instruction {
  /** Upper case: FROM, COPY, RUN, ... */
  op: string;
  /** The rest of the instruction, continuation lines joined. */
  args: string;
  /** 1-based line where it starts. */
  line: number;
}

export interface Stage {
  /** The image it starts from (FROM's first word). */
  from: string;
  /** `AS name`, when given. */
  name?: string;
  instructions: Instruction[];
}

/**
 * The stages of a Containerfile: its instructions, comments dropped and backslash-continued lines
 * joined (the subset of the syntax deploy/Containerfile uses: no heredocs, no escape directive).
 */
export function readContainerfile(file: string): Stage[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const instructions: Instruction[] = [];
  let current: Instruction | undefined;
  lines.forEach((raw, i) => {
    const text = raw.trim();
    if (text.startsWith('#') || (text === '' && !current)) return;
    const cont = text.endsWith('\\');
    const body = cont ? text.slice(0, -1).trim() : text;
    if (current) current.args += ` ${body}`;
    else {
      const m = /^(\S+)\s*(.*)$/.exec(body)!;
      current = { op: m[1].toUpperCase(), args: m[2], line: i + 1 };
    }
    if (!cont) {
      instructions.push({ ...current, args: current.args.trim() });
      current = undefined;
    }
  });
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`${file}:${ins.line}: FROM ${ins.args}`);
      stages.push({ from: m[1], name: m[2], instructions: [] });
    } else {
      if (stages.length === 0) throw new Error(`${file}:${ins.line}: ${ins.op} before FROM`);
      stages.at(-1)!.instructions.push(ins);
    }
  }
  return stages;
}

/** A COPY instruction's flags (--from=...), sources and destination (shell form). */
export function copyParts(args: string): { flags: Record<string, string>; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const flags: Record<string, string> = {};
  while (words[0]?.startsWith('--')) {
    const [k, v] = words.shift()!.slice(2).split('=');
    flags[k] = v ?? '';
  }
  const dest = words.pop()!;
  return { flags, sources: words, dest };
}

/** The Node version .ci/run installs as the reference (the first `node_bin VERSION`). */
export function ciNodeVersion(): string {
  const ci = fs.readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
  const m = /^NODE24=\$\(node_bin (\d+\.\d+\.\d+)\)$/m.exec(ci);
  if (!m) throw new Error('.ci/run: no NODE24=$(node_bin X.Y.Z) line');
  return m[1];
}

let options: Set<string> | undefined;

/** The long flags of `socsim experiment run` (the default subcommand), from its --help. */
export function experimentFlags(): Set<string> {
  if (!options) {
    const r = socsim(['experiment', 'run', '--help']);
    if (r.code !== 0) throw new Error(`socsim experiment run --help: ${r.stderr}`);
    options = new Set(r.stdout.match(/--[a-z][a-z0-9-]*/g));
  }
  return options;
}

/** The `--flag` words of a command line. */
export const flagsOf = (args: readonly string[]): string[] => args.filter((a) => a.startsWith('--'));
