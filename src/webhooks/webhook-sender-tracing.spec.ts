import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OtlpReceiver, SPAN_KIND_CLIENT } from '../../test/support/otlp-receiver';
import { startTracing, type RunningTracing } from '../tracing/tracing';
import { WebhookSender } from './webhook-sender';

describe('WebhookSender with tracing on (exported to a local OTLP/HTTP receiver)', () => {
  let receiver: OtlpReceiver;
  let tracing: RunningTracing | undefined;
  let endpoint: Server;
  let base: string;
  const previousEndpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The exporter reads OpenTelemetry's variables from the process's environment.
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${receiver.endpoint}/v1/traces`;
    tracing = await startTracing(process.env);
    endpoint = createServer((req, res) => req.resume().on('end', () => res.writeHead(500).end('down')));
    await new Promise<void>((done) => endpoint.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await tracing?.shutdown();
    if (previousEndpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = previousEndpoint;
    endpoint.closeAllConnections();
    await new Promise((done) => endpoint.close(done));
    await receiver.close();
  });

  it('traces a webhook attempt with its event, host and outcome, never its URL', async () => {
    const sender = new WebhookSender({ allowInsecureUrls: true, allowPrivateUrls: true }, 1_000);
    const result = await sender.send({
      url: `${base}/hooks/path-secret-42?key=merchant-secret`,
      eventId: 'evt_traced',
      body: '{}',
      signatureHeader: () => 'v1,sig',
    });
    sender.close();
    expect(result).toMatchObject({ delivered: false, httpStatus: 500 });
    await tracing!.shutdown();
    tracing = undefined;

    const span = receiver.spans.find((s) => s.name === 'webhook attempt');
    expect(span).toMatchObject({
      kind: SPAN_KIND_CLIENT,
      status: { code: 2 },
      attributes: {
        'webhook.event_id': 'evt_traced',
        'server.address': '127.0.0.1',
        'webhook.delivered': false,
        'http.response.status_code': 500,
        'error.type': '500',
      },
    });
    expect(JSON.stringify(receiver.spans)).not.toMatch(/merchant-secret|path-secret-42|v1,sig/);
  });
});
