/** Run header: scenario, agents, edges, step and simulated time, steps per second, status. */
import { format } from 'd3';
import type { Panel, RunState, ViewState } from '../state.ts';

/** "2 d 03:00" style simulated time for a number of seconds since the start. */
export function simTime(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const d = Math.floor(h / 24);
  const hh = String(h % 24).padStart(2, '0');
  const mm = String(m).padStart(2, '0');
  return d > 0 ? `${d} d ${hh}:${mm}` : `${hh}:${mm}`;
}

export function headerPanel(el: HTMLElement): Panel {
  el.innerHTML = `
    <div class="title"><h1 id="run-title">socsim</h1><p class="description"></p></div>
    <dl class="facts">
      <div><dt>scenario</dt><dd data-field="scenario"></dd></div>
      <div><dt>agents</dt><dd data-field="agents"></dd></div>
      <div><dt>edges</dt><dd data-field="edges"></dd></div>
      <div><dt>step</dt><dd data-field="step"></dd></div>
      <div><dt>simulated time</dt><dd data-field="time"></dd></div>
      <div><dt>steps / s</dt><dd data-field="rate"></dd></div>
      <div><dt>behaviour</dt><dd data-field="llm"></dd></div>
      <div><dt>status</dt><dd data-field="status"><span class="status"></span></dd></div>
    </dl>`;
  const field = (name: string) => el.querySelector<HTMLElement>(`[data-field="${name}"]`)!;
  return {
    update(run: RunState, _view: ViewState) {
      const m = run.manifest;
      el.querySelector('#run-title')!.textContent = `${m.scenario.name}`;
      el.querySelector('.description')!.textContent = m.scenario.description;
      field('scenario').textContent = m.scenario.name;
      field('agents').textContent = format(',')(m.agents);
      field('edges').textContent = format(',')(m.edges);
      field('step').textContent = `${m.steps_completed} / ${m.steps_requested}`;
      field('step').dataset.value = String(m.steps_completed);
      field('time').textContent = simTime(m.steps_completed * m.step_seconds);
      const wall = m.step_wall_ms.reduce((a, b) => a + b, 0) / 1000;
      field('rate').textContent = wall > 0 ? format('.3~r')(m.steps_completed / wall) : '–';
      field('llm').textContent = m.llm.provider === 'heuristic' ? 'heuristic (no LLM)' : `${m.llm.provider}${m.llm.model ? ` · ${m.llm.model}` : ''}`;
      const status = field('status').querySelector<HTMLElement>('.status')!;
      status.textContent = m.status + (run.live && m.status === 'running' ? ' · live' : '');
      status.dataset.status = m.status;
      el.dataset.status = m.status;
    },
  };
}
