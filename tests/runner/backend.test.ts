/**
 * `--backend` as a user meets it on a machine without a GPU driver (here: Vulkan pointed at no
 * driver, so this runs with or without a GPU): webgpu is refused with one line naming the flag and
 * the fix, auto says why it falls back and runs on the CPU, and a misspelt name is refused.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, tempDir } from './cliHelpers.ts';

const tmp = tempDir('socsim-backend-');
const noDriver = { ...process.env, VK_ICD_FILENAMES: '/nonexistent/icd.json', SOCSIM_REQUIRE_GPU: '' };
const run = (args: string[]) => spawnSync(process.execPath, [BIN, 'run', 'voter', '--agents', '500', '--steps', '2', ...args], { cwd: ROOT, encoding: 'utf8', env: noDriver, timeout: 600_000 });

describe.runIf(process.platform === 'linux')('--backend without a GPU driver', () => {
  it('webgpu: exit 2 with one line saying why and what to use instead; nothing is written', () => {
    const out = path.join(tmp, 'webgpu');
    const r = run(['--backend', 'webgpu', '--out', out]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^socsim: --backend webgpu: (no WebGPU adapter|the webgpu package could not be loaded).*; use --backend cpu or auto$/m);
    expect(fs.existsSync(path.join(out, 'manifest.json'))).toBe(false);
  });

  it('auto: says it falls back, runs on the CPU and records it in the manifest', () => {
    const out = path.join(tmp, 'auto');
    const r = run(['--backend', 'auto', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/backend auto: .*; using cpu/);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')).backend).toBe('cpu');
  });

  it('an unknown backend is refused with the valid names', () => {
    const r = run(['--backend', 'cuda', '--out', path.join(tmp, 'x')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Allowed choices are cpu, webgpu, auto');
  });
});
