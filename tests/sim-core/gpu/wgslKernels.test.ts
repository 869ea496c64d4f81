/**
 * Every WGSL version of a kernel, found in the sources: each is attached to a declaration in its
 * module's `kernels` export (so the webgpu executor, which takes it from the declaration, reaches
 * it, and a worker finds the declaration), its generated header matches what its body uses, and,
 * with an adapter, every variant compiles. The first two need no adapter.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnyKernel } from '../../../sim-core/kernel.ts';
import { shaderOf } from '../../../sim-core/gpu/gpuKernels.ts';
import { isWgslKernel, layoutOf, wgslName, type WgslKernel } from '../../../sim-core/gpu/wgslKernel.ts';
import { gpuOrSkip } from '../../gpuHelpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** The folders that declare kernels (the layers below the runner). */
const FOLDERS = ['sim-core', 'graph', 'population', 'models', 'platform', 'recsys', 'llm-archetypes'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : name.endsWith('.ts') ? [p] : [];
  });
}

/** Modules that declare kernels or WGSL versions, by their text. */
const files = FOLDERS.flatMap((f) => sources(path.join(ROOT, f))).filter((f) => /\bkernelList\(|\bwgslKernel\(\{/.test(readFileSync(f, 'utf8')));
const modules = await Promise.all(files.map(async (f) => [path.relative(ROOT, f), (await import(pathToFileURL(f).href)) as Record<string, unknown>] as const));
const kernels: AnyKernel[] = modules.flatMap(([, m]) => Object.values((m.kernels ?? {}) as Record<string, AnyKernel>));
const versions = modules.flatMap(([file, m]) => Object.entries(m).filter(([, v]) => isWgslKernel(v)).map(([name, v]) => ({ where: `${file} ${name}`, def: v as WgslKernel })));
const withGpu = kernels.filter((k) => k.gpu);
const variantsOf = (k: AnyKernel) => k.gpu!.variants ?? [''];

describe('WGSL versions of kernels', () => {
  it('are found: the modules of every layer, their kernels and versions', () => {
    expect(files.length).toBeGreaterThan(5);
    expect(withGpu.length).toBeGreaterThanOrEqual(30);
  });

  it('each is attached to a kernel of a `kernels` export, which the webgpu executor takes it from', () => {
    const attached = new Set(withGpu.map((k) => k.gpu));
    expect(versions.filter((v) => !attached.has(v.def)).map((v) => v.where)).toEqual([]);
  });

  it("each variant's generated header is what its body uses: every binding and Params field used, every field used declared", () => {
    const bad: string[] = [];
    for (const k of withGpu) {
      for (const variant of variantsOf(k)) {
        const l = layoutOf(k.name, k.spec, k.gpu!, variant);
        const body = k.gpu!.body({ variant, parts: 3 });
        const shader = shaderOf(k, variant, 3);
        const where = `${k.name}${variant ? ` (${variant})` : ''}`;
        if (/@binding|struct Params/.test(body)) bad.push(`${where}: the body declares bindings or Params itself`);
        for (const x of l.arrays) {
          const used = x.as === 'split' ? /\btgt\(/.test(body) : new RegExp(`\\b${wgslName(x.name)}\\b`).test(body);
          if (!used) bad.push(`${where}: binds ${x.name} (${wgslName(x.name)}), which the body never uses`);
        }
        if (l.pack.length > 0 && !/\binp\[/.test(body)) bad.push(`${where}: binds a pack the body never reads`);
        if (!!k.gpu!.result !== /\bresult\[/.test(body)) bad.push(`${where}: result ${k.gpu!.result ? 'declared but unused' : 'used but not declared'}`);
        for (const f of l.fields) if (!new RegExp(`\\bp\\.${f}\\b`).test(shader)) bad.push(`${where}: Params field ${f} is never read`);
        const fields = new Set(['rows', 'stride', ...l.fields]);
        for (const m of body.matchAll(/\bp\.([a-z_0-9]+)/g)) if (!fields.has(m[1])) bad.push(`${where}: the body reads p.${m[1]}, which Params lacks`);
      }
    }
    expect([...new Set(bad)]).toEqual([]);
  });
});

const gpu = await gpuOrSkip('compiling every WGSL version of a kernel');
afterAll(() => gpu?.close());

describe.skipIf(!gpu)('WGSL versions on the adapter', () => {
  it('every variant compiles', async () => {
    const failed: string[] = [];
    for (const k of withGpu) {
      for (const variant of variantsOf(k)) {
        gpu!.device.pushErrorScope('validation');
        const module = gpu!.device.createShaderModule({ code: shaderOf(k, variant, layoutOf(k.name, k.spec, k.gpu!, variant).split ? 3 : 0) });
        gpu!.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
        const err = await gpu!.device.popErrorScope();
        if (err) failed.push(`${k.name}${variant ? ` (${variant})` : ''}: ${err.message.split('\n')[0]}`);
      }
    }
    expect(failed).toEqual([]);
  }, 120_000);
});
