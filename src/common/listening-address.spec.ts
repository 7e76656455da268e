import { listeningAddress } from './listening-address';

describe('listeningAddress (the start-up line)', () => {
  it('with HOST=0.0.0.0 names the bound wildcard address, and localhost for this machine', () => {
    const line = listeningAddress('0.0.0.0', 3000);
    expect(line).toMatchObject({ bound: '0.0.0.0:3000', url: 'http://localhost:3000' });
    expect(line.message).toContain('0.0.0.0:3000');
    expect(line.message).toContain('http://localhost:3000');
    expect(listeningAddress('::', 3000)).toMatchObject({ bound: '[::]:3000', url: 'http://localhost:3000' });
  });

  it('on loopback says localhost; on one address, that address', () => {
    expect(listeningAddress('127.0.0.1', 3000)).toEqual({
      bound: '127.0.0.1:3000',
      url: 'http://localhost:3000',
      message: 'payments BFF listening on http://localhost:3000',
    });
    expect(listeningAddress('192.168.1.20', 8080)).toMatchObject({ bound: '192.168.1.20:8080', url: 'http://192.168.1.20:8080' });
    expect(listeningAddress('fd00::1', 8080).url).toBe('http://[fd00::1]:8080');
  });
});
