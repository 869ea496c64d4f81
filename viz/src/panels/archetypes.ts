/**
 * Archetypes: per archetype, its size, the behaviour parameters in force at the selected step
 * (the latest LLM decision before it), and that decision's reason and example post. Sizes and
 * group labels come from the selected snapshot; decisions from archetypes.arrow, present only
 * when an LLM provider ran.
 */
import { format } from 'd3';
import type { Panel, RunState, ViewState } from '../state.ts';

const PARAMS: Array<[string, string]> = [
  ['p_post', 'post'],
  ['p_like', 'like'],
  ['p_repost', 'repost'],
  ['p_comment', 'comment'],
  ['p_eps', 'ε'],
  ['p_mu', 'μ'],
];

interface Row {
  archetype: number;
  label: string;
  members: number;
  decision: number; // row index in archetypes.arrow, or -1
}

/** Index of the latest decision row per archetype with step < `before` (rows in step order). */
export function latestDecisions(step: ArrayLike<number>, archetype: ArrayLike<number>, before: number): Map<number, number> {
  const out = new Map<number, number>();
  for (let i = 0; i < step.length; i++) if (step[i]! < before) out.set(archetype[i]!, i);
  return out;
}

export function archetypesPanel(el: HTMLElement): Panel {
  el.innerHTML = `<h2>Archetypes</h2><p class="note arch-note"></p>
    <div class="table-wrap" tabindex="0" role="region" aria-label="archetypes table">
      <table><thead><tr>
        <th scope="col">#</th><th scope="col">group</th><th scope="col" class="num">members</th><th scope="col" class="num">decided</th>
        ${PARAMS.map(([, l]) => `<th scope="col" class="num">${l}</th>`).join('')}
        <th scope="col">last LLM reason</th><th scope="col">example post</th>
      </tr></thead><tbody></tbody></table></div>`;
  const tbody = el.querySelector('tbody')!;
  const note = el.querySelector<HTMLElement>('.arch-note')!;
  const f3 = format('.3f');
  const fInt = format(',');
  return {
    update(run: RunState, view: ViewState) {
      const a = run.archetypes;
      const decisions = a?.num.step && a.num.archetype ? latestDecisions(a.num.step, a.num.archetype, view.step) : new Map<number, number>();
      const rows = new Map<number, Row>();
      for (const g of run.groups ?? []) rows.set(g.archetype, { archetype: g.archetype, label: g.label, members: g.members, decision: -1 });
      for (const [arch, i] of decisions) {
        const r = rows.get(arch) ?? { archetype: arch, label: '', members: a!.num.members?.[i] ?? NaN, decision: -1 };
        r.decision = i;
        rows.set(arch, r);
      }
      const list = [...rows.values()].sort((x, y) => y.members - x.members || x.archetype - y.archetype);
      const llm = run.manifest.llm.provider !== 'heuristic';
      note.textContent = a
        ? `${list.length} archetypes; parameters from the latest ${run.manifest.llm.provider} decision before step ${view.step} (${decisions.size} decided so far)`
        : list.length
          ? `${list.length} archetypes (sizes after step ${run.snap?.step ?? '?'}); ${llm ? 'no archetypes.arrow yet' : 'behaviour set by the heuristic policy, not an LLM: no parameters or reasons recorded'}`
          : run.snap
            ? 'this scenario has no archetypes'
            : 'loading…';
      el.dataset.rows = String(list.length);
      el.dataset.decided = String(decisions.size);
      tbody.replaceChildren(
        ...list.map((r) => {
          const tr = document.createElement('tr');
          tr.dataset.archetype = String(r.archetype);
          const cells: Array<[string, string, string?]> = [
            [String(r.archetype), 'num'],
            [r.label, ''],
            [Number.isFinite(r.members) ? fInt(r.members) : '–', 'num members'],
            [r.decision >= 0 ? String(a!.num.step![r.decision]) : '–', 'num'],
            ...PARAMS.map(([k]): [string, string] => [r.decision >= 0 && a!.num[k] ? f3(a!.num[k]![r.decision]!) : '–', 'num param']),
            [r.decision >= 0 ? (a!.str.reason?.[r.decision] ?? '') : '', 'reason'],
            [r.decision >= 0 ? (a!.str.example_post?.[r.decision] ?? '') : '', 'example'],
          ];
          for (const [text, cls] of cells) {
            const td = document.createElement('td');
            td.textContent = text;
            if (cls) td.className = cls;
            tr.append(td);
          }
          if (r.decision >= 0 && a!.str.failure?.[r.decision] && a!.str.failure[r.decision] !== 'none') tr.title = `failure: ${a!.str.failure[r.decision]}`;
          return tr;
        }),
      );
    },
  };
}
