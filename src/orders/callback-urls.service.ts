import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/app-config';
import type { CallbackOutcome } from './order.types';

/**
 * The two URLs the provider calls for an order. Each carries a token bound to the order and the
 * outcome (HMAC-SHA256 with CALLBACK_SIGNING_SECRET): the success token does not work on the
 * failure URL, nor for another order, and is checked in constant time.
 */
@Injectable()
export class CallbackUrlsService {
  private readonly publicBaseUrl: string;
  private readonly signingSecret: string;

  constructor(config: ConfigService<AppConfig, true>) {
    this.publicBaseUrl = config.get('publicBaseUrl', { infer: true });
    this.signingSecret = config.get('callbackSigningSecret', { infer: true });
  }

  urlsFor(orderId: string): { successUrl: string; failureUrl: string } {
    return { successUrl: this.urlFor(orderId, 'success'), failureUrl: this.urlFor(orderId, 'failure') };
  }

  verify(orderId: string, outcome: string, token: unknown): boolean {
    if (outcome !== 'success' && outcome !== 'failure') return false;
    if (typeof token !== 'string' || token.length === 0 || token.length > 200) return false;
    const expected = Buffer.from(this.tokenFor(orderId, outcome));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private urlFor(orderId: string, outcome: CallbackOutcome): string {
    return `${this.publicBaseUrl}/v1/callbacks/payin/${orderId}/${outcome}?token=${this.tokenFor(orderId, outcome)}`;
  }

  private tokenFor(orderId: string, outcome: CallbackOutcome): string {
    return createHmac('sha256', this.signingSecret).update(`payin-callback:v1:${orderId}:${outcome}`).digest('base64url');
  }
}
