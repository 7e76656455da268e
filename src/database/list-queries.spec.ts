import { keysetPage, withinPeriod } from './list-queries';

const at = new Date('2026-11-23T10:00:00.000Z');
const id = '0f337719-beae-4580-8ccb-ad6a610d08cf';

describe('keysetPage', () => {
  it('the first page: the filter as given, newest first with the id breaking ties', () => {
    expect(keysetPage('createdAt', { status: 'PENDING' }, { limit: 51 })).toEqual({
      where: { status: 'PENDING' },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: 51,
    });
  });

  it('a later page: the filter, the time bound where the index scan starts, and strictly after the position, on its own time field', () => {
    expect(keysetPage('receivedAt', { outcome: 'success' }, { limit: 11, after: { at, id } })).toEqual({
      where: {
        AND: [
          { outcome: 'success' },
          { receivedAt: { lte: at } },
          { OR: [{ receivedAt: { lt: at } }, { receivedAt: at, id: { lt: id } }] },
        ],
      },
      orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
      take: 11,
    });
  });
});

describe('withinPeriod', () => {
  const from = new Date('2026-11-01T00:00:00.000Z');
  const to = new Date('2026-12-01T00:00:00.000Z');

  it('is the half-open window [from, to) on the field, either bound alone, or nothing', () => {
    expect(withinPeriod('at', { from, to })).toEqual({ at: { gte: from, lt: to } });
    expect(withinPeriod('createdAt', { from })).toEqual({ createdAt: { gte: from } });
    expect(withinPeriod('createdAt', { to })).toEqual({ createdAt: { lt: to } });
    expect(withinPeriod('createdAt', {})).toEqual({});
  });
});
