// summary.mjs RUN_DIR [FROM_STEP]: the manifest's set-up, step and phase medians from FROM_STEP on,
// peak RSS and the kernels that ran on the device.
import fs from 'node:fs';
const [dir, from = '0'] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(`${dir}/manifest.json`, 'utf8'));
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN; };
const k = Number(from);
const steps = m.step_wall_ms.slice(k);
console.log(`${dir}: backend ${m.backend}${m.adapter ? ` (${m.adapter})` : ''}, threads ${m.threads}, agents ${m.agents ?? '?'}, edges ${m.edges}, set-up ${m.setup_seconds?.toFixed?.(1)} s, peak RSS ${(m.peak_rss_bytes / 2 ** 30).toFixed(2)} GiB`);
console.log(`  step ms (steps ${k}..${m.step_wall_ms.length - 1}): median ${med(steps).toFixed(1)} min ${Math.min(...steps).toFixed(1)} max ${Math.max(...steps).toFixed(1)}; all: ${m.step_wall_ms.map((x) => x.toFixed(0)).join(' ')}`);
for (const [p, xs] of Object.entries(m.phase_wall_ms ?? {})) console.log(`  phase ${p.padEnd(22)} ${med(xs.slice(k)).toFixed(1)} ms`);
if (m.kernel_calls) for (const [b, calls] of Object.entries(m.kernel_calls)) console.log(`  kernel calls on ${b}: ${JSON.stringify(calls)}`);
const calls = (k) => m.kernel_calls?.webgpu?.[k] ?? m.kernel_calls?.cpu?.[k] ?? 0;
for (const [name, t] of Object.entries(m.kernel_transfer_bytes ?? {})) if (t.up + t.down > 0) console.log(`  transfers ${name.padEnd(16)} up ${(t.up / 1e6).toFixed(1)} MB, down ${(t.down / 1e6).toFixed(1)} MB over ${calls(name) || 'the'} calls`);
for (const [name, ms] of Object.entries(m.kernel_device_ms ?? {})) console.log(`  device ${name.padEnd(16)} ${ms.length} calls, median ${med(ms.slice(k)).toFixed(2)} ms from call ${k}, total ${ms.reduce((a, b) => a + b, 0).toFixed(0)} ms`);
for (const [name, ms] of Object.entries(m.kernel_clock_ms ?? {})) console.log(`  clock  ${name.padEnd(16)} ${ms.length} passes, median ${med(ms.slice(k)).toFixed(2)} ms from call ${k}, total ${ms.reduce((a, b) => a + b, 0).toFixed(0)} ms (device's clock)`);
