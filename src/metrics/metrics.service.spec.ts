import { MetricsService } from './metrics.service';

describe('MetricsService.gaugeRefreshedEvery', () => {
  let metrics: MetricsService;

  beforeEach(() => {
    jest.useFakeTimers();
    metrics = new MetricsService();
  });
  afterEach(() => {
    metrics.onApplicationShutdown();
    jest.useRealTimers();
  });

  const valueIn = (body: string) => body.match(/^counted_things\{kind="a"\} (\d+)$/m)?.[1];

  it('reads nothing until scraped, then once per interval however often it is scraped', async () => {
    let count = 0;
    const read = jest.fn(() => Promise.resolve([{ labels: { kind: 'a' }, value: ++count }]));
    metrics.gaugeRefreshedEvery('counted_things', 'things', ['kind'], 30_000, read);
    expect(read).not.toHaveBeenCalled();

    expect(valueIn((await metrics.render()).body)).toBe('1');
    for (let i = 0; i < 5; i++) expect(valueIn((await metrics.render()).body)).toBe('1');
    expect(read).toHaveBeenCalledTimes(1);

    await jest.advanceTimersByTimeAsync(30_000);
    expect(read).toHaveBeenCalledTimes(2);
    expect(valueIn((await metrics.render()).body)).toBe('2');
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('keeps the last values when a background read fails', async () => {
    const read = jest
      .fn<Promise<{ labels: { kind: string }; value: number }[]>, []>()
      .mockResolvedValueOnce([{ labels: { kind: 'a' }, value: 7 }])
      .mockRejectedValueOnce(new Error('database away'));
    metrics.gaugeRefreshedEvery('counted_things', 'things', ['kind'], 1_000, read);
    expect(valueIn((await metrics.render()).body)).toBe('7');
    await jest.advanceTimersByTimeAsync(1_000);
    expect(read).toHaveBeenCalledTimes(2);
    expect(valueIn((await metrics.render()).body)).toBe('7');
  });

  it('fails a scrape whose first read fails, and reads again on the next scrape', async () => {
    const read = jest
      .fn<Promise<{ labels: { kind: string }; value: number }[]>, []>()
      .mockRejectedValueOnce(new Error('database away'))
      .mockResolvedValueOnce([{ labels: { kind: 'a' }, value: 3 }]);
    metrics.gaugeRefreshedEvery('counted_things', 'things', ['kind'], 1_000, read);
    await expect(metrics.render()).rejects.toThrow('database away');
    expect(valueIn((await metrics.render()).body)).toBe('3');
  });

  it('stops reading once the application shuts down', async () => {
    const read = jest.fn(() => Promise.resolve([{ labels: { kind: 'a' }, value: 1 }]));
    metrics.gaugeRefreshedEvery('counted_things', 'things', ['kind'], 1_000, read);
    await metrics.render();
    metrics.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(read).toHaveBeenCalledTimes(1);
  });
});
