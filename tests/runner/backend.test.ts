/**
 * `--backend` as a user meets it on a machine without a GPU driver (here: Vulkan pointed at no
 * driver, so this runs with or without a GPU): webgpu is refused with one line naming the flag and
 * the fix (and nothing else: the GPU library's own warnings stay out), auto says why it falls back
 * and runs on the CPU, and a misspelt name is refused. Where the Vulkan loader finds driver
 * manifests (vulkanDrivers.ts) is checked against a made-up environment.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, tempDir } from './cliHelpers.ts';
import { vulkanDriverFiles, vulkanDriverPlaces } from '../../sim-core/gpu/vulkanDrivers.ts';

const tmp = tempDir('socsim-backend-');
const noDriver = { ...process.env, VK_ICD_FILENAMES: '/nonexistent/icd.json', SOCSIM_REQUIRE_GPU: '' };
const run = (args: string[]) => spawnSync(process.execPath, [BIN, 'run', 'voter', '--agents', '500', '--steps', '2', ...args], { cwd: ROOT, encoding: 'utf8', env: noDriver, timeout: 600_000 });

describe.runIf(process.platform === 'linux')('--backend without a GPU driver', () => {
  it('webgpu: exit 2 with one line saying why and what to use instead; nothing is written', () => {
    const out = path.join(tmp, 'webgpu');
    const r = run(['--backend', 'webgpu', '--out', out]);
    expect(r.status, r.stderr).toBe(2);
    // One line, socsim's own: no warnings of the GPU library before it.
    expect(r.stderr).toMatch(/^socsim: --backend webgpu: (no WebGPU adapter|the webgpu package could not be loaded)[^\n]*; use --backend cpu or auto\n$/);
    expect(fs.existsSync(path.join(out, 'manifest.json'))).toBe(false);
  });

  it('auto: says it falls back, runs on the CPU and records it in the manifest', () => {
    const out = path.join(tmp, 'auto');
    const r = run(['--backend', 'auto', '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/backend auto: .*; using cpu/);
    expect(r.stderr).not.toMatch(/Warning|vkCreateInstance/);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')).backend).toBe('cpu');
  });

  it('an unknown backend is refused with the valid names', () => {
    const r = run(['--backend', 'cuda', '--out', path.join(tmp, 'x')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Allowed choices are cpu, webgpu, auto');
  });
});

describe('the Vulkan driver manifests', () => {
  it('are read from VK_DRIVER_FILES (or VK_ICD_FILENAMES) when set, else the XDG folders; VK_ADD_DRIVER_FILES adds', () => {
    const d = path.join(tmp, 'icd');
    fs.mkdirSync(path.join(d, 'share/vulkan/icd.d'), { recursive: true });
    fs.writeFileSync(path.join(d, 'share/vulkan/icd.d/lvp_icd.json'), '{}');
    fs.writeFileSync(path.join(d, 'share/vulkan/icd.d/notes.txt'), '');
    const home = path.join(d, 'home');
    const xdg = { XDG_CONFIG_DIRS: path.join(d, 'etc'), XDG_DATA_DIRS: path.join(d, 'share') };
    expect(vulkanDriverPlaces(xdg, home)).toContain(path.join(d, 'share/vulkan/icd.d'));
    expect(vulkanDriverFiles(vulkanDriverPlaces(xdg, home))).toEqual([path.join(d, 'share/vulkan/icd.d/lvp_icd.json')]);
    expect(vulkanDriverFiles(vulkanDriverPlaces({ ...xdg, VK_ICD_FILENAMES: '/nonexistent/icd.json' }, home))).toEqual([]);
    expect(vulkanDriverFiles(vulkanDriverPlaces({ ...xdg, VK_DRIVER_FILES: path.join(d, 'share/vulkan/icd.d') }, home))).toHaveLength(1);
    const added = { XDG_CONFIG_DIRS: '/nonexistent', XDG_DATA_DIRS: '/nonexistent', VK_ADD_DRIVER_FILES: path.join(d, 'share/vulkan/icd.d/lvp_icd.json') };
    expect(vulkanDriverFiles(vulkanDriverPlaces(added, home))).toEqual([path.join(d, 'share/vulkan/icd.d/lvp_icd.json')]);
  });
});
