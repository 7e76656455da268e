import { createServer } from 'node:net';
import { createRunDatabase, describeTestDatabaseFailure, TestDatabaseSetupError } from './test-database-server';

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('TEST_DATABASE_URL problems are one line saying what to do', () => {
  it('names the unreachable server and the way out, without a stack trace', async () => {
    const port = await closedPort();
    const failure = await createRunDatabase(`postgresql://postgres:s3cret@127.0.0.1:${port}/postgres`, 'bff_test_x').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TestDatabaseSetupError);
    const { message, stack } = failure as TestDatabaseSetupError;
    expect(message).toBe(
      `TEST_DATABASE_URL: no PostgreSQL server answers at 127.0.0.1:${port} (ECONNREFUSED). ` +
        'Start it, or unset TEST_DATABASE_URL to use PGlite.',
    );
    expect(stack).toBe(message);
    expect(message).not.toContain('s3cret');
  });

  it('explains that the database in the URL must exist because the run connects through it', () => {
    const missing = Object.assign(new Error('database "test" does not exist'), { code: '3D000' });
    const line = describeTestDatabaseFailure(missing, 'postgresql://postgres@db.local:6543/test');
    expect(line).toBe(
      'TEST_DATABASE_URL names the database "test", which does not exist on db.local:6543. ' +
        'The run creates and drops its own database through that connection: name one that exists, ' +
        'e.g. postgresql://postgres@127.0.0.1:5432/postgres.',
    );
    expect(line).not.toContain('\n');
  });

  it('refuses a value that is not a PostgreSQL URL before connecting', async () => {
    await expect(createRunDatabase('mysql://root@127.0.0.1/test', 'bff_test_x')).rejects.toThrow(
      'TEST_DATABASE_URL is not a PostgreSQL URL: set it like postgresql://postgres@127.0.0.1:5432/postgres, or unset it to use PGlite.',
    );
  });

  it('passes on any other refusal of the server in the same line', () => {
    const refused = Object.assign(new Error('role "nobody" does not exist'), { code: '28000' });
    expect(describeTestDatabaseFailure(refused, 'postgres://nobody@127.0.0.1/postgres')).toBe(
      'TEST_DATABASE_URL: cannot create the run\'s database on 127.0.0.1:5432: role "nobody" does not exist.',
    );
  });
});
