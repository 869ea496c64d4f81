// Prints the first WebGPU adapter Dawn finds (as socsim's openGpu asks for it) and all its limits.
import { create, globals } from 'webgpu';
Object.assign(globalThis, globals);
const instance = create([]);
const a = await instance.requestAdapter();
if (!a) { console.log('adapter: none'); process.exit(3); }
const i = a.info;
console.log('adapter:', JSON.stringify({ vendor: i.vendor, architecture: i.architecture, device: i.device, description: i.description }));
const lim = {};
for (const k in a.limits) lim[k] = a.limits[k];
console.log('limits:', JSON.stringify(lim));
console.log('features:', JSON.stringify([...a.features].sort()));
process.exit(/llvmpipe|swiftshader/i.test(`${i.description} ${i.device}`) ? 4 : 0);
