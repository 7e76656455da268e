/**
 * `npm run keys:reencrypt`: seals again with the current DATA_ENCRYPTION_KEY every stored value
 * sealed with a previous key (DATA_ENCRYPTION_PREVIOUS_KEYS) or before key ids, in batches, safe
 * while the service runs; prints what it did per column. Run again, it resumes where it stopped.
 * Exit codes: 0 done, 1 values no configured key opens (or a failure), 2 no DATABASE_URL or a bad option.
 */
import { ConfigService } from '@nestjs/config';
import { SecretBox } from '../common/secret-box';
import { ConfigValidationError, loadAppConfig, loadDotEnvIfPresent, type AppConfig } from '../config/app-config';
import { Database } from '../database/database';
import { reencryptionReport, reencryptSealedValues } from './reencrypt-sealed-values';
import { SealedValuesRepository } from './sealed-values.repository';

const DEFAULT_BATCH_SIZE = 500;
const MAX_BATCH_SIZE = 10_000;

function batchSizeOf(args: string[]): number | undefined {
  const option = args.find((arg) => arg.startsWith('--batch-size='));
  if (option === undefined) return DEFAULT_BATCH_SIZE;
  const value = option.slice('--batch-size='.length);
  return /^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_BATCH_SIZE ? Number(value) : undefined;
}

async function main() {
  loadDotEnvIfPresent();
  const config: AppConfig = loadAppConfig();
  if (!config.databaseUrl) {
    process.stderr.write(
      'DATABASE_URL is not set: name the database to re-encrypt (the embedded database is reachable only from its own process).\n',
    );
    process.exit(2);
  }
  const batchSize = batchSizeOf(process.argv.slice(2));
  if (batchSize === undefined) {
    process.stderr.write(`--batch-size must be a whole number from 1 to ${MAX_BATCH_SIZE}\n`);
    process.exit(2);
  }
  const box = new SecretBox(config.dataEncryptionKey, config.dataEncryptionPreviousKeys);
  const database = new Database(new ConfigService<AppConfig, true>(config));
  try {
    const results = await reencryptSealedValues(new SealedValuesRepository(database), box, { batchSize });
    const report = reencryptionReport(results, box.currentKeyId);
    process.stdout.write(`${report.lines.join('\n')}\n`);
    process.exitCode = report.unreadable > 0 ? 1 : 0;
  } finally {
    await database.onApplicationShutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigValidationError ? error.message : `re-encryption failed: ${error instanceof Error ? error.message : String(error)}`}\n`,
  );
  process.exit(1);
});
