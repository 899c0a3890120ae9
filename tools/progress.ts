/**
 * @module tools/progress
 * Progress bars for long-running tools (cli-progress), drawn on stderr so that
 * stdout stays clean for --json output.
 */
import cliProgress from "cli-progress";

export interface Progress {
  update(done: number): void;
  stop(): void;
}

export function progressBar(label: string, total: number): Progress {
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {eta_formatted} left`,
      stream: process.stderr,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 5000,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(total, 1), 0);
  return {
    update: (done) => bar.update(Math.min(done, Math.max(total, 1))),
    stop: () => bar.stop(),
  };
}
