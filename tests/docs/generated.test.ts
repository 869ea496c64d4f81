/**
 * The generated reference pages (docs/cli.md, docs/run-directory.md) are what `npm run docs`
 * would write now. Needs dist/ built (`npm test` builds it first): the sample experiment's runs are
 * child processes of the CLI.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedPages } from '../../scripts/docs.ts';
import { ROOT } from './markdown.ts';

describe('generated documentation', () => {
  it('docs/cli.md and docs/run-directory.md are current', async () => {
    const pages = await generatedPages();
    expect(Object.keys(pages).sort()).toEqual(['docs/cli.md', 'docs/run-directory.md']);
    const stale = Object.entries(pages)
      .filter(([rel, text]) => !fs.existsSync(path.join(ROOT, rel)) || fs.readFileSync(path.join(ROOT, rel), 'utf8') !== text)
      .map(([rel]) => `${rel} is stale: run npm run docs`);
    expect(stale).toEqual([]);
  });
});
