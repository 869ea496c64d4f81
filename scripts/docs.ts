/**
 * `npm run docs`: writes the generated reference pages, docs/cli.md (from the commander program)
 * and docs/run-directory.md (from the files sample runs write). `--check` writes nothing and
 * exits 1 naming every page that differs from what would be written. Needs dist/ built (the
 * sample experiment's runs are child processes of the CLI).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliReference } from './docs/cliReference.ts';
import { runDirectoryReference } from './docs/runDirectoryReference.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Every generated page: repository path -> its Markdown. */
export async function generatedPages(): Promise<Record<string, string>> {
  return { 'docs/cli.md': await cliReference(), 'docs/run-directory.md': await runDirectoryReference() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  const pages = await generatedPages();
  const stale: string[] = [];
  for (const [rel, text] of Object.entries(pages)) {
    const file = path.join(ROOT, rel);
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
    if (current === text) continue;
    if (check) stale.push(rel);
    else {
      fs.writeFileSync(file, text);
      process.stdout.write(`wrote ${rel}\n`);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(`stale: ${stale.join(', ')}; run npm run docs\n`);
    process.exit(1);
  }
}
