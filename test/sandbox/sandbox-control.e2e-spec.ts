import { CREDENTIALS, http, tokenFor, useSandbox } from './sandbox-harness';

describe('provider sandbox (HTTP)', () => {
  const context = useSandbox();
  const { extra, agentHeaders, payInHeaders, cardHeaders } = context;

  it('enforces the agent hourly limit per IP and leaves other routes alone', async () => {
    const sb = await extra({ agentHourlyLimit: 3 });
    const c = http(sb);
    const t = await tokenFor(c);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await c.post('/api/agent/link/init', {}, { headers: agentHeaders(t) })).status);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    const limited = await c.post('/api/agent/bills/v3', {}, { headers: payInHeaders(t) });
    expect(limited.status).toBe(429);
    expect(limited.data).toEqual({ success: false, message: 'Too many requests' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await c.get('/api/action/card/x', { headers: cardHeaders(t) })).status).toBe(404);
    expect(sb.state.counters.rateLimited).toBe(2);
  });

  it('injects faults in-process and over HTTP, after recording the request', async () => {
    const sb = await extra({});
    const c = http(sb);
    sb.state.injectFault({ path: '/api/action/auth', status: 503, body: { error: 503, message: 'Maintenance' } });
    const faulted = await c.post('/api/action/auth', CREDENTIALS);
    expect(faulted.status).toBe(503);
    expect(faulted.data).toEqual({ error: 503, message: 'Maintenance' });
    expect(sb.state.requestsTo('/api/action/auth')).toHaveLength(1);
    expect(sb.state.counters.authRequests).toBe(1);
    const t = await tokenFor(c);

    const injected = await c.post('/__sandbox/faults', {
      path: '/api/action/card/*',
      method: 'GET',
      times: 2,
      status: 502,
      rawBody: '<html>Bad Gateway</html>',
      contentType: 'text/html',
    });
    expect(injected.status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const res = await c.get('/api/action/card/x', { headers: cardHeaders(t) });
      expect(res.status).toBe(502);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.data).toBe('<html>Bad Gateway</html>');
    }
    expect((await c.get('/api/action/card/x', { headers: cardHeaders(t) })).status).toBe(404);

    sb.state.injectFault({ path: '/api/action/card/x', dropConnection: true });
    await expect(c.get('/api/action/card/x', { headers: cardHeaders(t) })).rejects.toMatchObject({
      code: expect.stringMatching(/ECONNRESET|ERR_BAD_RESPONSE|socket hang up/),
    });

    sb.state.injectFault({ path: '/api/action/card/x', delayMs: 200 });
    const started = Date.now();
    const delayed = await c.get('/api/action/card/x', { headers: cardHeaders(t) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(delayed.data).toEqual({ error: 404, message: 'Card not found' });

    const invalid = await c.post('/__sandbox/faults', { path: 'no-slash' });
    expect(invalid.status).toBe(400);
    expect(sb.state.counters.faultsApplied).toBe(5);
  });

  it('answers unknown routes with 404 JSON, lists and resets recorded requests', async () => {
    const sb = await extra({});
    const c = http(sb);
    const unknown = await c.get('/api/action/nothing?x=1');
    expect(unknown.status).toBe(404);
    expect(unknown.data).toEqual({ error: 404, message: expect.any(String) });
    const unknownAgent = await c.post('/api/agent/nothing', {});
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.data).toEqual({ success: false, message: expect.any(String) });
    await c.post('/api/action/auth', CREDENTIALS, { headers: { 'X-Trace': 'abc' } });

    const all = (await c.get('/__sandbox/requests')).data;
    expect(all.map((r: any) => r.path)).toEqual(['/api/action/nothing', '/api/agent/nothing', '/api/action/auth']);
    expect(all[0]).toMatchObject({
      id: expect.any(Number),
      at: expect.any(String),
      method: 'GET',
      query: { x: '1' },
      body: null,
      ip: '127.0.0.1',
    });
    expect(all[2]).toMatchObject({ method: 'POST', body: CREDENTIALS, headers: { 'x-trace': 'abc' } });
    expect((await c.get('/__sandbox/requests', { params: { path: '/api/action/*' } })).data).toHaveLength(2);

    expect((await c.post('/__sandbox/reset')).data).toEqual({ success: true, all: false });
    expect(sb.state.requests).toHaveLength(0);
    expect(sb.state.tokens.size).toBe(1);
    await c.post('/__sandbox/reset', { all: true });
    expect(sb.state.tokens.size).toBe(0);
    expect(sb.state.counters.authRequests).toBe(0);
  });
});
