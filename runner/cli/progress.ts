/** Progress output: a bar on a TTY (cli-progress), one plain line per step otherwise. */
import cliProgress from 'cli-progress';

export interface Progress {
  step(step: number, steps: number, wallMs: number, metrics: Map<string, number>): void;
  log(line: string): void;
  done(): void;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toPrecision(4);
}

function summary(metrics: Map<string, number>, max = 4): string {
  return [...metrics].slice(0, max).map(([k, v]) => `${k}=${fmt(v)}`).join(' ');
}

export function createProgress(stream: NodeJS.WriteStream): Progress {
  if (!stream.isTTY) {
    return {
      step: (s, n, ms, m) => stream.write(`step ${s}/${n}  ${ms.toFixed(0)} ms  ${summary(m)}\n`),
      log: (line) => stream.write(`${line}\n`),
      done: () => {},
    };
  }
  let bar: cliProgress.SingleBar | undefined;
  return {
    step(s, n, ms, m) {
      if (!bar) {
        bar = new cliProgress.SingleBar(
          { stream, format: 'step {value}/{total} [{bar}] {ms} ms/step  {info}', hideCursor: true, clearOnComplete: false },
          cliProgress.Presets.shades_classic,
        );
        bar.start(n, 0, { ms: '-', info: '' });
      }
      bar.update(s, { ms: ms.toFixed(0), info: summary(m, 3) });
    },
    log(line) {
      if (bar) bar.stop();
      bar = undefined;
      stream.write(`${line}\n`);
    },
    done() {
      bar?.stop();
    },
  };
}
