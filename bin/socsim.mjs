#!/usr/bin/env node
// socsim command-line entry: runs the compiled CLI in dist/ (`npm run build` writes it in a
// checkout; the package ships it).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/runner/cli/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('socsim: the compiled code (dist/) is missing; in a checkout run npm run build (npm install does it)\n');
  process.exit(1);
}
const { main } = await import(cli.href);
const code = await main(process.argv);
// Worker pools are closed by the runner; exit explicitly so a stray handle cannot keep us alive.
process.exit(code);
