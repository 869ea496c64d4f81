/** What `runScenario` takes (the options of `socsim run` and of the API's `run`) and returns. */
import type { Executor } from '../../sim-core/exec.ts';
import type { BackendName } from '../../sim-core/backend.ts';
import type { LlmOptions } from '../../llm-archetypes/setup.ts';
import type { SetupContext } from './defineScenario.ts';
import type { Manifest } from './runDirectory.ts';

export interface RunOptions {
  agents?: number;
  steps?: number;
  seed?: number;
  threads?: number;
  graphFile?: string;
  /** How graphFile is read (`--ids`, `--directed`/`--undirected`); unset: the scenario's default. */
  graphRead?: SetupContext<unknown>['graphRead'];
  out?: string;
  /** Replace an earlier run in `out` (only the files a run writes are removed). */
  force?: boolean;
  snapshotEvery?: number;
  stepSeconds?: number;
  /** LLM provider options (`--llm*`); default heuristic (no LLM). */
  llm?: Partial<LlmOptions>;
  /** Write the full action trace (events.arrow). */
  events?: boolean;
  /** Scenario parameter overrides (already parsed from `--set key=value`). */
  params?: Record<string, unknown>;
  scenarioFile?: string;
  /** The plugin modules given with --plugin, absolute (loaded already; recorded for a resume). */
  plugins?: string[];
  /** Called after every step with its metrics and wall time; `step` counts the steps completed (1 after the first), as metrics.arrow's `step`. */
  onStep?(step: number, steps: number, wallMs: number, metrics: Map<string, number>): void;
  /**
   * Called once the run's files can be read: the first step's metrics are in and graph.arrow is
   * written (it is written while the first steps run). Not called when no step completes or when
   * graph.arrow cannot be written.
   */
  onReady?(): void;
  log?(line: string): void;
  /**
   * Lines the user must see even when `log` is off (a resume that passes over a damaged checkpoint
   * for the previous one); default `log`.
   */
  warn?(line: string): void;
  /** Resolves to true once the run should stop at the next step boundary. */
  signal?: { stopRequested: boolean };
  /** Run kernels on this executor instead of creating one for `threads` (the caller closes it). */
  executor?: Executor;
  /** The backend that steps the agents (default cpu; sim-core/backend.ts). Not with `executor`. */
  backend?: BackendName;
  /** Checkpoint every this many steps (0 = never); unset: automatic (runner/run/resume.ts). */
  checkpointEvery?: number;
  /**
   * Continue the interrupted run in `out` from its last checkpoint. The other options must be
   * the recorded run's (the CLI reads them from its manifest's `invocation`); `threads` may differ.
   */
  resume?: boolean;
}

export interface RunResult {
  dir: string;
  manifest: Manifest;
}
