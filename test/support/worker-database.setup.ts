import { useWorkerDatabase } from './worker-database';

// jest's `setupFilesAfterEnv` for the projects on a database: runs before the file's own hooks.
beforeAll(useWorkerDatabase, 120_000);
