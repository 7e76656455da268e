import { isDatabaseUnavailable } from './database-unavailable';

const socketError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect', errno: -111 });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['Prisma: cannot reach the server (P1001)', Object.assign(new Error("Can't reach database server"), { code: 'P1001' })],
    [
      'Prisma: pool timeout (P2024)',
      Object.assign(new Error('Timed out fetching a new connection from the connection pool'), { code: 'P2024' }),
    ],
    ['Prisma: initialisation failed to connect', Object.assign(new Error('init'), { errorCode: 'P1001' })],
    [
      'adapter-pg: connection closed',
      Object.assign(new Error('x'), {
        code: 'P2010',
        meta: { driverAdapterError: { name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } } },
      }),
    ],
    [
      'adapter-pg: terminated by an administrator (57P01)',
      Object.assign(new Error('x'), { meta: { driverAdapterError: { cause: { kind: 'postgres', code: '57P01' } } } }),
    ],
    ['pg: connection refused', socketError('ECONNREFUSED')],
    ['pg: no file descriptor left in the process (EMFILE)', socketError('EMFILE')],
    ['pg: no file descriptor left in the system (ENFILE)', socketError('ENFILE')],
    ['Prisma: an EMFILE adapter-pg passed through as a cause', new Error('outer', { cause: socketError('EMFILE') })],
    ['pg: connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['pg: pool wait timed out', new Error('timeout exceeded when trying to connect')],
    ['a wrapped cause', new Error('outer', { cause: socketError('ECONNRESET') })],
    ['PostgreSQL: too many connections', Object.assign(new Error('sorry, too many clients already'), { code: '53300', severity: 'FATAL' })],
  ])('%s', (_what, error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each([
    ['a unique violation', Object.assign(new Error('Unique constraint failed'), { code: 'P2002' })],
    [
      'NUL in text (22021)',
      Object.assign(new Error('x'), { meta: { driverAdapterError: { cause: { kind: 'postgres', code: '22021' } } } }),
    ],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a message that merely mentions a connection', new Error('Connection terminated unexpectedly? no: a provider said so')],
    ['nothing', undefined],
    [
      'a cycle of causes',
      (() => {
        const a: { cause?: unknown } = {};
        a.cause = a;
        return a;
      })(),
    ],
  ])('not %s', (_what, error) => expect(isDatabaseUnavailable(error)).toBe(false));
});
