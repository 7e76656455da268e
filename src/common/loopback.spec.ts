import { isHttpsOrLoopback, isLoopbackHost } from './loopback';

describe('isLoopbackHost', () => {
  it.each(['localhost', 'LocalHost', '127.0.0.1', '127.1.2.3', '[::1]', '::1', '[::ffff:127.0.0.1]'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each(['192.0.2.2', '10.0.0.1', '0.0.0.0', '[::]', 'idp.example.com', 'localhost.example.com', '127.0.0.1.nip.io', '[fd00::2]'])(
    '%s is not loopback',
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
    },
  );
});

describe('isHttpsOrLoopback', () => {
  it('accepts https anywhere and http on a loopback host only', () => {
    expect(isHttpsOrLoopback(new URL('https://idp.example.com/realms/acme'))).toBe(true);
    expect(isHttpsOrLoopback(new URL('http://127.0.0.1:8080/realms/acme'))).toBe(true);
    expect(isHttpsOrLoopback(new URL('http://[::1]:8080/'))).toBe(true);
    expect(isHttpsOrLoopback(new URL('http://idp.example.com/realms/acme'))).toBe(false);
    expect(isHttpsOrLoopback(new URL('http://192.0.2.2:8080/'))).toBe(false);
    expect(isHttpsOrLoopback(new URL('ftp://127.0.0.1/'))).toBe(false);
  });
});
