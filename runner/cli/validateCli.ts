/** `socsim validate`: the diffusion-facts experiment, reported as the validation table (analysis/validate.ts). */
import path from 'node:path';
import type { Command } from 'commander';
import { runExperimentFile } from './experimentCli.ts';
import { backendOption, intFlag, numFlag } from './flags.ts';
import { writeFileAtomic } from '../experiment/experimentRun.ts';
import { VALIDATE_EXPERIMENT, validationTable } from '../analysis/validate.ts';

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description('Run the default platform and a chronological timeline of followed accounts (100k agents, 48 h, 5 seeds each; experiments/diffusion-facts.ts) and print their reshare cascades beside published diffusion figures; writes DIR/validate.md and the experiment tables')
    .option('--out <dir>', 'experiment directory', path.join('runs', 'validate'))
    .option('--seeds <n>', 'seeds 1..n', intFlag('--seeds', 1, 100_000))
    .option('--jobs <n>', 'runs at once (each a child process)', intFlag('--jobs', 1, 1024), 2)
    .option('--threads <n>', 'worker threads of each run', intFlag('--threads', 1, 256), 1)
    .addOption(backendOption())
    .option('--agents <n>', 'agents per run (default 100000)', intFlag('--agents', 1, 2 ** 31 - 2))
    .option('--hours <h>', 'simulated hours per run (default 48); roots are the posts of the first half', numFlag('--hours', 0))
    .option('--step-seconds <s>', 'simulated seconds per step (default 900: delays are counted in steps)', numFlag('--step-seconds', 0))
    .option('--force', 'run every run again (a re-run otherwise reuses completed runs)')
    .option('--quiet', 'no progress bar')
    .action(async (opts) => {
      const fileArg = path.relative(process.cwd(), VALIDATE_EXPERIMENT);
      await runExperimentFile(fileArg, opts, [], (json, effects, dir) => {
        const table = validationTable(json, effects);
        writeFileAtomic(path.join(dir, 'validate.md'), table);
        return table;
      });
    });
}
