#!/usr/bin/env node
// socsim command-line entry. Node 20 cannot run TypeScript by itself: register tsx, then load the CLI.
import { register } from 'tsx/esm/api';

// The two large plain-JavaScript dependencies every run loads (apache-arrow: ~150 modules; zod:
// ~100) are imported before tsx's loader hooks are registered, so their modules do not each pass
// through the hooks (about 0.4 s of every start-up); later imports find them loaded.
await Promise.all([import('apache-arrow'), import('zod')]);
register();
const { main } = await import('../runner/cli.ts');
const code = await main(process.argv);
// Worker pools are closed by the runner; exit explicitly so a stray handle cannot keep us alive.
process.exit(code);
