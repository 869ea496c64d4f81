#!/usr/bin/env node
// socsim command-line entry. Node 20 cannot run TypeScript by itself: register tsx, then load the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../runner/cli.ts');
const code = await main(process.argv);
// Worker pools are closed by the runner; exit explicitly so a stray handle cannot keep us alive.
process.exit(code);
