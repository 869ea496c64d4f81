/** Helpers for the CLI tests in this folder: run the real `socsim` in a child process. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(ROOT, 'bin/socsim.mjs');

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `socsim ARGS` to completion (in `cwd`, default the repository root), killed after `timeoutMs`. */
export function socsim(args: string[], cwd = ROOT, timeoutMs = 120_000): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', timeout: timeoutMs });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `--set` for a social run with a false story injected at hour 0 and labelled at hour 2 (posts, cascades and interventions all get rows). */
export const STORY_SET = 'interventions=[{"kind":"inject","hour":0,"count":5,"stance":0.7,"veracity":"false","novelty":1.2,"tag":"rumour"},{"kind":"label","hour":2,"posts":{"tag":"rumour"}}]';
