/**
 * What finance staff type and open: `from`/`to` as days in REPORTS_TIMEZONE (a 25-hour day
 * included), a 400 naming the field for a day that does not exist, on every operation of the
 * finance document that has those filters; the CSV export as Excel opens it.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import { operationsOf } from '../../src/http/openapi-documents';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { parseCsv } from '../support/csv-reader';

/** 7 November 2032: New York leaves summer time at 02:00, so the day lasts 25 hours (04:00Z to 05:00Z the next day). */
const DAY = '2032-11-07';
const ZONE = 'America/New_York';

describe('finance inputs: days in the reports time zone, and the spreadsheet export', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let finance: string;
  const seeded: Record<string, string> = {};

  /** One order created at `at`, straight into the table (its customer marks it as this file's). */
  async function seedOrder(name: string, at: string, payer = 'Awa Ndiaye', amount = '1500') {
    const order = await service.prisma.order.create({
      data: {
        reference: `ord_inputs_${name}_${Date.parse(at)}`,
        customerId: 'finance-inputs',
        status: 'SUCCEEDED',
        amount,
        currency: 'XAF',
        service: 1,
        wallet: '237600000006',
        description: `finance inputs ${name}`,
        payer,
        payerEmail: 'inputs@example.com',
        createdAt: new Date(at),
      },
    });
    seeded[name] = order.id;
  }

  const get = (url: string, query: Record<string, string> = {}) =>
    service.app.inject({ method: 'GET', url, query, headers: { authorization: `Bearer ${finance}` } });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { REPORTS_TIMEZONE: ZONE });
    finance = await service.bearer('inputs-finance', 'finance');
    await seedOrder('dayBefore', '2032-11-07T03:59:59.999Z'); // 6 Nov, 23:59:59.999 EDT
    await seedOrder('firstMoment', '2032-11-07T04:00:00.000Z'); // 7 Nov, 00:00 EDT
    await seedOrder('repeatedHour', '2032-11-07T06:30:00.000Z'); // 7 Nov, 01:30 EST, the second 01:30 of the day
    await seedOrder('lastMoment', '2032-11-08T04:59:59.999Z'); // 7 Nov, 23:59:59.999 EST
    await seedOrder('dayAfter', '2032-11-08T05:00:00.000Z'); // 8 Nov, 00:00 EST
  }, 60_000);

  afterAll(async () => {
    if (service) await service.prisma.$executeRaw`DELETE FROM orders WHERE customer_id = 'finance-inputs'`;
    await service?.close();
    await sandbox?.close();
  });

  it('from=day&to=day is the whole day in REPORTS_TIMEZONE, 25 hours on the day the clocks go back', async () => {
    const inside = [seeded.lastMoment, seeded.repeatedHour, seeded.firstMoment];
    const list = await get('/v1/orders', { from: DAY, to: DAY, limit: '50' });
    expect(list.statusCode).toBe(200);
    expect(list.json<{ items: { id: string }[] }>().items.map((order) => order.id)).toEqual(inside);

    const summary = await get('/v1/reports/summary', { from: DAY, to: DAY });
    expect(summary.json()).toEqual({
      from: '2032-11-07T04:00:00.000Z',
      to: '2032-11-08T05:00:00.000Z',
      lines: [{ status: 'SUCCEEDED', currency: 'XAF', count: 3, total: '4500' }],
    });

    const csv = await get('/v1/orders/export.csv', { from: DAY, to: DAY, bom: 'false' });
    expect(
      parseCsv(csv.body)
        .slice(1)
        .map((row) => row[0]),
    ).toEqual(inside);
  });

  it('reads a moment without an offset in the zone, and one with an offset as written', async () => {
    const ids = async (query: Record<string, string>) =>
      (await get('/v1/orders', { ...query, limit: '50' })).json<{ items: { id: string }[] }>().items.map((order) => order.id);
    expect(await ids({ from: `${DAY}T00:00`, to: '2032-11-08T00:00' })).toEqual([
      seeded.lastMoment,
      seeded.repeatedHour,
      seeded.firstMoment,
    ]);
    expect(await ids({ from: '2032-11-07T04:00:00Z', to: '2032-11-07T06:30:00Z' })).toEqual([seeded.firstMoment]);
    // One day, two spellings of its first moment: a day and a wall-clock time give the same window.
    expect(await ids({ from: '2032-11-08', to: '2032-11-08' })).toEqual([seeded.dayAfter]);
    expect(await ids({ from: '2032-11-06', to: '2032-11-06' })).toContain(seeded.dayBefore);
  });

  it('answers 400 naming the field for a day that does not exist, on every operation of the finance document with a from/to filter', async () => {
    const document = (await get('/docs/finance-json')).json<OpenAPIObject>();
    const filtered = operationsOf(document).filter(({ operation }) =>
      ((operation.parameters ?? []) as { name: string; in: string }[]).some(
        (parameter) => parameter.in === 'query' && parameter.name === 'from',
      ),
    );
    expect(filtered.map(({ path }) => path).sort()).toEqual(
      [
        '/v1/audit-events',
        '/v1/callbacks',
        '/v1/distributions',
        '/v1/events',
        '/v1/orders',
        '/v1/orders/export.csv',
        '/v1/reports/summary',
      ].sort(),
    );
    for (const { path } of filtered) {
      for (const [field, value] of [
        ['from', '2026-02-30'],
        ['to', '2026-11-31'],
        ['to', '2026-11-01T24:00'],
      ]) {
        const res = await get(path, { [field]: value });
        expect({ path, field, status: res.statusCode, type: res.headers['content-type'] }).toEqual({
          path,
          field,
          status: 400,
          type: expect.stringMatching(/^application\/problem\+json/),
        });
        expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ field })] });
      }
      // The same field with a day that exists is accepted.
      expect({ path, status: (await get(path, { from: '2026-02-28', to: '2026-03-01' })).statusCode }).toEqual({ path, status: 200 });
    }
  });

  it('exports a CSV Excel opens as is: byte order mark by default, customer names that start like formulas as text', async () => {
    const names = [
      '=HYPERLINK("http://evil.test","click")',
      '+33 6 12 34 56 78',
      '-2+3+cmd|" /C calc"!A0',
      '@SUM(1+1)*cmd|" /C calc"!A0',
      '\t=1+1',
      'Éloïse Ngono',
    ];
    for (const [i, name] of names.entries()) await seedOrder(`name${i}`, `2032-11-09T10:00:0${i}.000Z`, name, `1${i}00`);
    const res = await service.app.inject({
      method: 'GET',
      url: '/v1/orders/export.csv',
      query: { from: '2032-11-09', to: '2032-11-09' },
      headers: { authorization: `Bearer ${finance}` },
    });
    expect(res.statusCode).toBe(200);
    const bytes = res.rawPayload;
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...rows] = parseCsv(bytes.subarray(3).toString('utf8'));
    const payer = header.indexOf('payer');
    const amount = header.indexOf('amount');
    // Newest first: the last seeded name comes first.
    expect(rows.map((row) => row[payer])).toEqual(names.map((name) => (/^[=+\-@\t\r]/.test(name) ? `'${name}` : name)).reverse());
    for (const row of rows) expect(row[payer]).not.toMatch(/^[=+\-@\t\r]/);
    // Amounts stay numbers.
    expect(rows.map((row) => row[amount])).toEqual(['1500', '1400', '1300', '1200', '1100', '1000']);

    const withoutMark = await get('/v1/orders/export.csv', { from: '2032-11-09', to: '2032-11-09', bom: 'false' });
    expect(withoutMark.rawPayload.subarray(0, 2).toString('utf8')).toBe('id');
  });
});
