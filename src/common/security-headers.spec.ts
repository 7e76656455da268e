import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import helmet, { type HelmetOptions } from 'helmet';
import { securityHeadersFor, serviceSecurityHeaders } from './security-headers';

/** What helmet itself sets on a real response of node's, for the same options. */
function headersHelmetSets(options: HelmetOptions): Record<string, string> {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  response.setHeader('x-powered-by', 'something');
  helmet(options)(request, response, () => undefined);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.getHeaders())) headers[name] = String(value);
  return headers;
}

describe('securityHeadersFor', () => {
  const cases: [string, HelmetOptions][] = [
    ['defaults', {}],
    [
      "the service's options",
      {
        contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], imgSrc: ["'self'", 'data:'], frameAncestors: ["'none'"] } },
        crossOriginEmbedderPolicy: false,
      },
    ],
    ['HSTS off, a referrer policy list', { strictTransportSecurity: false, referrerPolicy: { policy: ['no-referrer', 'origin'] } }],
  ];

  it.each(cases)('sends exactly what helmet sets, once computed (%s)', (_name, options) => {
    expect(securityHeadersFor(options)).toEqual(headersHelmetSets(options));
  });

  it('holds the CSP it was given and the usual protections', () => {
    const headers = securityHeadersFor({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], frameAncestors: ["'none'"] } } });
    expect(headers['content-security-policy']).toContain("default-src 'self'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    expect(Object.isFrozen(headers)).toBe(true);
  });

  it('refuses options helmet refuses, at start-up', () => {
    expect(() => securityHeadersFor({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], 'bad name': ['x'] } } })).toThrow();
  });
});

describe('serviceSecurityHeaders', () => {
  it.each(['http://0.0.0.0:3000', 'http://payments.internal:3000', 'http://localhost:3000'])(
    'asks no browser to move to https when the service is plain HTTP (%s): the Swagger UI loads its scripts over HTTP',
    (publicBaseUrl) => {
      const headers = serviceSecurityHeaders(publicBaseUrl);
      expect(headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
      expect(headers['strict-transport-security']).toBeUndefined();
      expect(headers['content-security-policy']).toContain("default-src 'self'");
      expect(headers['content-security-policy']).toContain("script-src 'self' 'unsafe-inline'");
      expect(headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it.each(['https://pay.example.com', 'HTTPS://pay.example.com/base'])(
    'asks browsers to stay on https for an https service (%s)',
    (publicBaseUrl) => {
      const headers = serviceSecurityHeaders(publicBaseUrl);
      expect(headers['content-security-policy']).toContain('upgrade-insecure-requests');
      expect(headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    },
  );

  it('lets the Swagger UI reach the extra sources it is given, and only those', () => {
    expect(serviceSecurityHeaders('http://localhost:3000')['content-security-policy']).toMatch(/connect-src 'self'(;|$)/);
    expect(serviceSecurityHeaders('http://localhost:3000', ['https://id.example.com'])['content-security-policy']).toContain(
      "connect-src 'self' https://id.example.com",
    );
  });
});
