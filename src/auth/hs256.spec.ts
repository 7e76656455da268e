import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { errors, jwtVerify, SignJWT } from 'jose';
import { Hs256Error, verifyHs256, type Hs256Refusal } from './hs256';

const SECRET = 'test-secret-of-at-least-thirty-two-characters';
const KEY = createSecretKey(Buffer.from(SECRET, 'utf8'));
const NOW_MS = Date.UTC(2026, 10, 23, 12, 0, 0);
const NOW = NOW_MS / 1000;
const OPTIONS = { clockToleranceSeconds: 30, requiredClaims: ['sub', 'exp'] };

type Verdict = 'ok' | Hs256Refusal;

function ours(token: string): Verdict {
  try {
    verifyHs256(token, KEY, { ...OPTIONS, now: NOW_MS });
    return 'ok';
  } catch (error) {
    if (error instanceof Hs256Error) return error.refusal;
    throw error;
  }
}

/** jose's verdict with the options the service used to give it for HS256. */
async function joses(token: string): Promise<Verdict> {
  try {
    await jwtVerify(token, new TextEncoder().encode(SECRET), {
      algorithms: ['HS256'],
      clockTolerance: 30,
      requiredClaims: ['sub', 'exp'],
      currentDate: new Date(NOW_MS),
    });
    return 'ok';
  } catch (error) {
    if (error instanceof errors.JWTExpired) return 'expired';
    if (error instanceof errors.JOSEError) return 'invalid';
    throw error;
  }
}

const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** A compact JWS of any header and payload text, signed (or not) with `secret`. */
function signed(headerJson: string, payloadJson: string, secret = SECRET): string {
  const input = `${b64url(headerJson)}.${b64url(payloadJson)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const timeClaim = fc.oneof(
  fc.integer({ min: NOW - 120, max: NOW + 120 }),
  fc.double({ min: NOW - 120, max: NOW + 120, noNaN: true }),
  fc.constantFrom(null, 'soon', true, [NOW + 60], {}),
);
const claims = fc.record(
  {
    sub: fc.oneof(fc.string(), fc.constant(null), fc.integer()),
    exp: timeClaim,
    nbf: timeClaim,
    iat: timeClaim,
    roles: fc.constantFrom(['customer'], ['finance', 'admin']),
  },
  { requiredKeys: [] },
);
const header = fc.oneof(
  fc.constant({ alg: 'HS256' }),
  fc.constant({ alg: 'HS256', typ: 'JWT' }),
  fc.constant({ alg: 'HS256', kid: 'k1' }),
  fc.constantFrom({ alg: 'HS384' }, { alg: 'none' }, { alg: 'RS256' }, { alg: 'hs256' }, { alg: 5 }, {}),
);
const payloadText = fc.oneof(
  claims.map((c) => JSON.stringify(c)),
  fc.constantFrom('[]', 'null', '"sub"', '42', '{', '', '{"sub":"a","exp":1e400}'),
);

describe('verifyHs256', () => {
  it('reaches the same verdict as jose on generated tokens: claims, headers, payloads, secrets', async () => {
    await fc.assert(
      fc.asyncProperty(header, payloadText, fc.boolean(), async (head, payload, rightSecret) => {
        const token = signed(JSON.stringify(head), payload, rightSecret ? SECRET : `${SECRET}-not`);
        expect(ours(token)).toBe(await joses(token));
      }),
      { numRuns: 500 },
    );
  });

  it('reaches the same verdict as jose on a valid token with any one character changed, dropped or added', async () => {
    const token = await new SignJWT({ roles: ['customer'] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('alice')
      .setExpirationTime(NOW + 60)
      .sign(new TextEncoder().encode(SECRET));
    expect(ours(token)).toBe('ok');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: token.length - 1 }),
        fc.constantFrom(...alphabet),
        fc.constantFrom('replace', 'drop', 'insert'),
        async (at, character, how) => {
          const changed =
            how === 'drop'
              ? token.slice(0, at) + token.slice(at + 1)
              : token.slice(0, at) + character + token.slice(how === 'replace' ? at + 1 : at);
          fc.pre(changed !== token);
          const verdict = ours(changed);
          // Stricter than jose on two points only: characters outside base64url inside a segment
          // (jose drops whitespace before decoding) and the padding '=' it tolerates.
          if (verdict === 'invalid' && /[= +/]/.test(changed)) return;
          expect(verdict).toBe(await joses(changed));
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('refuses a header with critical extensions, which no identity provider sends', async () => {
    const token = signed(JSON.stringify({ alg: 'HS256', crit: ['b64'], b64: true }), JSON.stringify({ sub: 'a', exp: NOW + 60 }));
    expect(ours(token)).toBe('invalid');
  });

  it('accepts a token signed by any of several keys (a rotation), and no other', () => {
    const previous = createSecretKey(Buffer.from('previous-secret-of-at-least-thirty-two-chars', 'utf8'));
    const unrelated = createSecretKey(Buffer.from('unrelated-secret-of-at-least-thirty-two-chars', 'utf8'));
    const token = signed('{"alg":"HS256"}', JSON.stringify({ sub: 'a', exp: NOW + 60 }));
    const verdict = (keys: KeyObject[]) => {
      try {
        return verifyHs256(token, keys, { ...OPTIONS, now: NOW_MS }).sub;
      } catch (error) {
        return (error as Hs256Error).refusal;
      }
    };
    expect(verdict([previous, KEY])).toBe('a');
    expect(verdict([KEY, previous])).toBe('a');
    expect(verdict([previous, unrelated])).toBe('invalid');
    expect(verdict([])).toBe('invalid');
  });

  it('tells an expired token from an invalid one, with 30 s of tolerance either way', () => {
    const at = (claimsOf: object) => ours(signed('{"alg":"HS256"}', JSON.stringify({ sub: 'a', ...claimsOf })));
    expect(at({ exp: NOW - 31 })).toBe('expired');
    expect(at({ exp: NOW - 29 })).toBe('ok');
    expect(at({ exp: NOW + 60, nbf: NOW + 31 })).toBe('invalid');
    expect(at({ exp: NOW + 60, nbf: NOW + 29 })).toBe('ok');
    expect(at({ exp: NOW + 60, iat: 'yesterday' })).toBe('invalid');
    expect(at({})).toBe('invalid');
  });
});
