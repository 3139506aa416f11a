/**
 * Leaving the process once stdout and stderr have drained. `process.exit`
 * right after a large write to a pipe cuts it (a 5 MB plan arrived as 64 KiB
 * through `| wc -c`, with exit code 0): what is still queued in the stream
 * is lost. Wait for each stream to flush (or to fail: a reader that went
 * away), then exit with `code`.
 */
export async function exitAfterDrain(code: number, streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): Promise<never> {
  process.exitCode = code;
  await Promise.all(
    streams.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.destroyed || s.writableLength === 0) return resolve();
          const done = () => resolve();
          s.once('drain', done);
          s.once('error', done);
          s.once('close', done);
        }),
    ),
  );
  process.exit(code);
}
