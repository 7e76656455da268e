import { Client } from 'pg';

/** How long the run waits for the TEST_DATABASE_URL server before saying it is unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;

const EXAMPLE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

/**
 * A failure to prepare the run's database, said in one line: jest prints the `stack` of a global
 * setup error, and a stack trace of the pg driver tells a newcomer nothing about what to change.
 */
export class TestDatabaseSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TestDatabaseSetupError';
    this.stack = message;
  }
}

/**
 * Creates a fresh database on the server of `serverUrl` (the database named there is only used to
 * connect), empty or a copy of `template` (a migrated database nobody is connected to), and returns
 * its URL and a function that drops it.
 */
export async function createRunDatabase(
  serverUrl: string,
  name: string,
  template?: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const target = parseServerUrl(serverUrl);
  await withServer(serverUrl, (client) => createDatabase(client, name, template));
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: () => dropRunDatabase(serverUrl, name),
  };
}

/** Drops database `name` of the server of `serverUrl`, ending its sessions. */
export function dropRunDatabase(serverUrl: string, name: string): Promise<void> {
  return withServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** How often a copy is tried again while another session leaves the template (55006). */
const TEMPLATE_BUSY_ATTEMPTS = 20;

async function createDatabase(client: Client, name: string, template: string | undefined): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
      return;
    } catch (error) {
      // Copies of one template made at once by two workers: the server refuses a copy while any
      // other session is connected to the template, including another CREATE DATABASE reading it.
      if ((error as { code?: unknown }).code !== '55006' || attempt === TEMPLATE_BUSY_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

async function withServer(serverUrl: string, work: (client: Client) => Promise<unknown>): Promise<void> {
  const client = new Client({ connectionString: serverUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    await work(client);
  } catch (error) {
    throw new TestDatabaseSetupError(describeTestDatabaseFailure(error, serverUrl));
  } finally {
    await client.end().catch(() => undefined);
  }
}

function parseServerUrl(serverUrl: string): URL {
  try {
    const url = new URL(serverUrl);
    if (url.protocol === 'postgres:' || url.protocol === 'postgresql:') return url;
  } catch {
    // reported below, like any other unusable value
  }
  throw new TestDatabaseSetupError(`TEST_DATABASE_URL is not a PostgreSQL URL: set it like ${EXAMPLE_URL}, or unset it to use PGlite.`);
}

/** One line saying what went wrong with TEST_DATABASE_URL and what to do about it. */
export function describeTestDatabaseFailure(error: unknown, serverUrl: string): string {
  const url = parseServerUrl(serverUrl);
  const server = `${url.hostname || 'localhost'}:${url.port || '5432'}`;
  const code = (error as { code?: unknown } | null)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  if (code === '3D000') {
    const database = decodeURIComponent(url.pathname.slice(1)) || url.username || 'postgres';
    return (
      `TEST_DATABASE_URL names the database "${database}", which does not exist on ${server}. ` +
      `The run creates and drops its own database through that connection: name one that exists, e.g. ${EXAMPLE_URL}.`
    );
  }
  if (typeof code === 'string' && ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT'].includes(code)) {
    return `TEST_DATABASE_URL: no PostgreSQL server answers at ${server} (${code}). Start it, or unset TEST_DATABASE_URL to use PGlite.`;
  }
  if (/timeout/i.test(reason)) {
    return `TEST_DATABASE_URL: no PostgreSQL server answered at ${server} within ${CONNECT_TIMEOUT_MS / 1000} s. Start it, or unset TEST_DATABASE_URL to use PGlite.`;
  }
  return `TEST_DATABASE_URL: cannot create the run's database on ${server}: ${reason}.`;
}
