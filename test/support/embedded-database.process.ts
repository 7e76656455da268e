import { readFileSync } from 'node:fs';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';

/**
 * A jest worker's embedded database (test/support/worker-database.ts): a PGlite loaded from the
 * run's migrated template dump, served on a loopback port, whose URL is the first line written to
 * stdout. It ends with SIGTERM (global teardown) or as soon as the run's jest process is gone, so
 * an interrupted run leaves nothing behind.
 * Arguments: the dump file, the pid of the run's jest process.
 */
async function main(): Promise<void> {
  const [dumpFile, runPid] = process.argv.slice(2);
  const embedded = await startEmbeddedPostgres({ fromDump: new Blob([readFileSync(dumpFile)]), maxConnections: 200 });
  process.stdout.write(`${embedded.url}\n`);
  setInterval(() => {
    try {
      process.kill(Number(runPid), 0);
    } catch {
      process.exit(0);
    }
  }, 1_000);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
