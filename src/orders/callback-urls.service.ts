import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/app-config';
import type { CallbackOutcome } from './order.types';

/**
 * The two URLs the provider calls for an order. Each carries a token bound to the order and the
 * outcome (HMAC-SHA256 with CALLBACK_SIGNING_SECRET): the success token does not work on the
 * failure URL, nor for another order, and is checked in constant time. A token signed with one of
 * CALLBACK_SIGNING_PREVIOUS_SECRETS is accepted too: the URLs of orders created before a rotation
 * stay valid, while new URLs are signed with the current secret only.
 */
@Injectable()
export class CallbackUrlsService {
  private readonly publicBaseUrl: string;
  private readonly signingSecret: string;
  /** The current secret first: most callbacks are for orders created under it. */
  private readonly acceptedSecrets: readonly string[];

  constructor(config: ConfigService<AppConfig, true>) {
    this.publicBaseUrl = config.get('publicBaseUrl', { infer: true });
    this.signingSecret = config.get('callbackSigningSecret', { infer: true });
    this.acceptedSecrets = [this.signingSecret, ...(config.get('callbackSigningPreviousSecrets', { infer: true }) ?? [])];
  }

  urlsFor(orderId: string): { successUrl: string; failureUrl: string } {
    return { successUrl: this.urlFor(orderId, 'success'), failureUrl: this.urlFor(orderId, 'failure') };
  }

  verify(orderId: string, outcome: string, token: unknown): boolean {
    if (outcome !== 'success' && outcome !== 'failure') return false;
    if (typeof token !== 'string' || token.length === 0 || token.length > 200) return false;
    const given = Buffer.from(token);
    return this.acceptedSecrets.some((secret) => {
      const expected = Buffer.from(tokenFor(secret, orderId, outcome));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  }

  private urlFor(orderId: string, outcome: CallbackOutcome): string {
    return `${this.publicBaseUrl}/v1/callbacks/payin/${orderId}/${outcome}?token=${tokenFor(this.signingSecret, orderId, outcome)}`;
  }
}

function tokenFor(secret: string, orderId: string, outcome: CallbackOutcome): string {
  return createHmac('sha256', secret).update(`payin-callback:v1:${orderId}:${outcome}`).digest('base64url');
}
