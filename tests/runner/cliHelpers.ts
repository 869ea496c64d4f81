/** Helpers for the CLI tests in this folder: run the real `socsim` in a child process. */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(ROOT, 'bin/socsim.mjs');

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `socsim ARGS` to completion (in `cwd`, default the repository root), killed after `timeoutMs`. */
export function socsim(args: string[], cwd = ROOT, timeoutMs = 600_000): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `--set` for a social run with a false story injected at hour 0 and labelled at hour 2 (posts, cascades and interventions all get rows). */
export const STORY_SET = 'interventions=[{"kind":"inject","hour":0,"count":5,"stance":0.7,"veracity":"false","novelty":1.2,"tag":"rumour"},{"kind":"label","hour":2,"posts":{"tag":"rumour"}}]';

/** Every file of a run except the manifest (wall times differ), relative to the run directory. */
export function runFiles(dir: string): string[] {
  const top = fs.readdirSync(dir).filter((f) => f.endsWith('.arrow'));
  const agents = fs.readdirSync(path.join(dir, 'agents')).map((f) => `agents/${f}`);
  return [...top, ...agents].sort();
}

export function expectSameFiles(a: string, b: string, skip: string[] = []): void {
  expect(runFiles(b)).toEqual(runFiles(a));
  for (const f of runFiles(a)) if (!skip.includes(f)) expect(fs.readFileSync(path.join(b, f)).equals(fs.readFileSync(path.join(a, f))), f).toBe(true);
}

export const steps = (dir: string): number => {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { steps_completed: number }).steps_completed;
  } catch {
    return -1; // not written yet, or caught mid-rename
  }
};

/** Starts a run and sends `signal` once its manifest reports at least `after` completed steps. */
export function runAndStop(args: string[], dir: string, after: number, signal: NodeJS.Signals, env?: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, '--out', dir, '--quiet'], { cwd: ROOT, stdio: 'ignore', env });
    const poll = setInterval(() => {
      if (steps(dir) >= after) {
        clearInterval(poll);
        child.kill(signal);
      }
    }, 2);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(poll);
      resolve(code);
    });
  });
}
