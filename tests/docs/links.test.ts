/** Every relative link and #anchor in README.md and docs/*.md resolves. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, brokenReason, pages, relativeLinks, ROOT } from './markdown.ts';

const read = (p: string) => (p.endsWith('.md') ? fs.readFileSync(path.join(ROOT, p), 'utf8') : undefined);

describe('documentation links', () => {
  it('every relative link and anchor of README.md and docs/ resolves', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages()) {
      for (const link of relativeLinks(page, read(page)!)) {
        checked++;
        const why = brokenReason(link, read);
        if (why) broken.push(`${link.page}:${link.line}: ${link.target}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('makes anchors as GitHub does', () => {
    const a = anchors('# Top\n## Votes, veracity, novelty and labels\n## `socsim run`\n## Top\n```\n# not a heading\n```\n## Diffusion facts: `socsim validate`');
    expect([...a]).toEqual(['top', 'votes-veracity-novelty-and-labels', 'socsim-run', 'top-1', 'diffusion-facts-socsim-validate']);
  });

  it('finds a broken link and a broken anchor', () => {
    const links = relativeLinks('docs/x.md', 'see [a](getting-started.md#no-such-heading), [b](nowhere.md) and `[c](code.md)`');
    expect(links.map((l) => brokenReason(l, read))).toEqual(['docs/getting-started.md has no heading with the anchor #no-such-heading', 'docs/nowhere.md does not exist']);
  });
});
