// hostsplit.mts: runs `socsim` (its arguments as given) and prints where each step's host time
// went, medians per step from step FROM_STEP (steps counted by `activate` calls) of: GPU kernels'
// host-side dispatch (encoding and uploads), the uploads and pack refreshes alone, CPU kernels
// run under webgpu (incl. read-backs of their stale arguments), sync() (waiting for the queue,
// then reading back), read-backs; on the cpu backend each kernel's wall time. A diagnostic: it
// wraps the executors' and the residency's methods, private ones included, so it follows their
// names (a method renamed there drops out of the split silently).
//   FROM_STEP=48 node deploy/gpu/hostsplit.mts run social-feed ...
import { GpuExecutor } from '../../sim-core/gpu/executor.ts';
import { Residency } from '../../sim-core/gpu/residency.ts';
import { ReadBuffers } from '../../sim-core/gpu/readBuffers.ts';
import { PoolExecutor } from '../../sim-core/pool.ts';
import { main } from '../../runner/cli/cli.ts';
const from = Number(process.env.FROM_STEP ?? 0);
let step = -1;
const per = new Map<string, number[]>();
const add = (k: string, ms: number) => {
  if (step < from) return;
  const x = per.get(k) ?? [];
  x[step - from] = (x[step - from] ?? 0) + ms;
  per.set(k, x);
};
let depth = 0;
const wrap = (proto: any, name: string, label: (self: any, args: any[]) => string | undefined, top = false) => {
  const orig = proto[name];
  proto[name] = async function (...args: any[]) {
    if (top && depth === 0 && args[0]?.name === 'activate') step++;
    const k = label(this, args);
    if (top) depth++;
    const t0 = performance.now();
    try {
      return await orig.apply(this, args);
    } finally {
      if (top) depth--;
      if (k) add(k, performance.now() - t0);
    }
  };
};
const G = GpuExecutor.prototype as any;
let current = '';
for (const m of ['run', 'reduce', 'queueReduce']) {
  wrap(G, m, (_s, a) => { current = a[0]?.name ?? '?'; return undefined; }, true);
}
wrap(G, 'onCpu', (_s, a) => `cpu ${a[0]?.name}`);
wrap(G, 'dispatch', () => `gpu-dispatch ${current}`);
wrap(G, 'sync', (_s, a) => (a[0] ? 'sync(apply rows)' : 'sync(all)'));
wrap(G, 'capture', () => 'capture');
// Where the arrays are kept (residency.ts) and read back (readBuffers.ts).
const R = Residency.prototype as any;
wrap(R, 'toDevice', () => `upload ${current}`);
wrap(R, 'packBuffer', () => `pack ${current}`);
wrap(R, 'toHostAll', () => 'read back arrays (in sync/onCpu)');
wrap(ReadBuffers.prototype as any, 'read', () => 'read back result words (overlaps)');
// The cpu backend: PoolExecutor directly (under webgpu its calls are already inside onCpu).
const P = PoolExecutor.prototype as any;
for (const m of ['run']) {
  const orig = P[m];
  P[m] = async function (k: any, ...rest: any[]) {
    if (depth === 0 && k?.name === 'activate') step++;
    const t0 = performance.now();
    try {
      return await orig.call(this, k, ...rest);
    } finally {
      if (depth === 0) add(`pool ${k?.name}`, performance.now() - t0);
    }
  };
}
const code = await main(['node', 'socsim', ...process.argv.slice(2)]);
const med = (xs: number[]) => { const s = xs.filter((x) => x !== undefined).sort((a, b) => a - b); return s.length ? s[s.length >> 1] : 0; };
console.log(`host-time split, median ms per step over steps ${from}..${from + Math.max(0, ...[...per.values()].map((x) => x.length)) - 1}:`);
for (const [k, xs] of [...per].sort((a, b) => med(b[1]) - med(a[1]))) if (med(xs) >= 0.5) console.log('  ' + k.padEnd(34), med(xs).toFixed(1).padStart(8), ' all:', xs.map((x) => (x ?? 0).toFixed(0)).join(' '));
process.exit(code);
