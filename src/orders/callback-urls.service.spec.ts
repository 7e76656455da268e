import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/app-config';
import { CallbackUrlsService } from './callback-urls.service';

const ORDER_ID = '0b7c6f3e-5d0a-4c4e-9a47-3f2d1c0b9a88';
const OLD_SECRET = 'old-callback-signing-secret-0123456789abcdef';
const NEW_SECRET = 'new-callback-signing-secret-0123456789abcdef';

function urlsService(callbackSigningSecret: string, callbackSigningPreviousSecrets: string[] = []): CallbackUrlsService {
  return new CallbackUrlsService(
    new ConfigService<AppConfig, true>({ publicBaseUrl: 'https://pay.example', callbackSigningSecret, callbackSigningPreviousSecrets }),
  );
}

const tokenOf = (url: string) => new URL(url).searchParams.get('token');

describe('CallbackUrlsService', () => {
  it('accepts its own tokens, each for its order and outcome only', () => {
    const urls = urlsService(NEW_SECRET);
    const { successUrl, failureUrl } = urls.urlsFor(ORDER_ID);
    expect(urls.verify(ORDER_ID, 'success', tokenOf(successUrl))).toBe(true);
    expect(urls.verify(ORDER_ID, 'failure', tokenOf(failureUrl))).toBe(true);
    expect(urls.verify(ORDER_ID, 'failure', tokenOf(successUrl))).toBe(false);
    expect(urls.verify(ORDER_ID.replace('8', '9'), 'success', tokenOf(successUrl))).toBe(false);
  });

  it('after a rotation, accepts the tokens of a previous secret and signs new URLs with the current one only', () => {
    const before = urlsService(OLD_SECRET).urlsFor(ORDER_ID);
    const during = urlsService(NEW_SECRET, [OLD_SECRET]);
    expect(during.verify(ORDER_ID, 'success', tokenOf(before.successUrl))).toBe(true);
    expect(during.verify(ORDER_ID, 'failure', tokenOf(before.failureUrl))).toBe(true);
    expect(during.verify(ORDER_ID, 'failure', tokenOf(before.successUrl))).toBe(false);
    const fresh = during.urlsFor(ORDER_ID);
    expect(tokenOf(fresh.successUrl)).not.toBe(tokenOf(before.successUrl));
    expect(urlsService(NEW_SECRET).verify(ORDER_ID, 'success', tokenOf(fresh.successUrl))).toBe(true);
    expect(urlsService(OLD_SECRET).verify(ORDER_ID, 'success', tokenOf(fresh.successUrl))).toBe(false);
  });

  it('refuses the tokens of a secret that is no longer listed', () => {
    const before = urlsService(OLD_SECRET).urlsFor(ORDER_ID);
    expect(urlsService(NEW_SECRET).verify(ORDER_ID, 'success', tokenOf(before.successUrl))).toBe(false);
  });
});
