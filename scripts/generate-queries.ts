/**
 * `npm run sql:queries`: writes the SQL of every hot-path repository statement to
 * `src/queries/<repository>.sql` (the committed listing; test/database/sql-queries.spec.ts fails
 * when it is stale), so that a change to what runs on the hot paths shows up in review as SQL.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { committedQueryFiles, QUERIES_DIR } from './sql-queries';

mkdirSync(QUERIES_DIR, { recursive: true });
const files = committedQueryFiles();
for (const stale of readdirSync(QUERIES_DIR)) if (stale.endsWith('.sql') && !files.has(stale)) rmSync(join(QUERIES_DIR, stale));
for (const [name, content] of files) writeFileSync(join(QUERIES_DIR, name), content);
console.log(`wrote ${[...files.keys()].map((name) => `src/queries/${name}`).join(', ')}`);
