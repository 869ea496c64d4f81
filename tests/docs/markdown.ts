/**
 * Reading the documentation's Markdown for the docs tests: the pages, their headings' anchors as
 * GitHub makes them, their relative links, and the fenced blocks a page marks for testing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** README.md and every page under docs/, as repository paths. */
export function pages(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

/** The text with fenced code blocks blanked out (their lines kept, so line numbers hold). */
export function withoutFences(text: string): string {
  let inFence = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line;
    })
    .join('\n');
}

/**
 * GitHub's anchor for a heading: lower case, inline code and link markup dropped, every character
 * but letters, digits, spaces, hyphens and underscores removed, spaces turned into hyphens; a
 * repeated anchor gets -1, -2, ... in order.
 */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const plain = m[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');
    const base = plain.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  page: string;
  line: number;
  target: string;
}

/** Relative links and images of a page (not http(s), mailto or other schemes), outside code. */
export function relativeLinks(page: string, text: string): Link[] {
  const out: Link[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.replace(/`[^`]*`/g, '');
      for (const m of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1])) out.push({ page, line: i + 1, target: m[1] });
      }
    });
  return out;
}

/** Why a link does not resolve, or undefined when it does. */
export function brokenReason(link: Link, read: (repoPath: string) => string | undefined): string | undefined {
  const [file, anchor] = link.target.split('#', 2) as [string, string | undefined];
  const target = file === '' ? link.page : path.posix.normalize(path.posix.join(path.posix.dirname(link.page), file));
  if (target.startsWith('..')) return `${link.target} leaves the repository`;
  if (!fs.existsSync(path.join(ROOT, target))) return `${target} does not exist`;
  if (anchor === undefined) return undefined;
  const text = read(target);
  if (text === undefined) return `${target} is not a Markdown file, so #${anchor} cannot be checked`;
  return anchors(text).has(anchor) ? undefined : `${target} has no heading with the anchor #${anchor}`;
}

/** The commands of every fenced block marked `<!-- docs-test: run -->` in a page, in order: one per line, comments and blank lines dropped. */
export function testedCommands(text: string): string[] {
  return [...text.matchAll(/<!-- docs-test: run -->\s*\n```[a-z]*\n([\s\S]*?)\n```/g)].flatMap((m) => m[1].split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')));
}
