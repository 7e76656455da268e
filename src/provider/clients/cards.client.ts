import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/app-config';
import { APP_LOGGER } from '../../logging/logging.module';
import { ProviderHttpClient } from '../provider-http.client';
import type { ProviderRequest } from '../provider-request';
import type {
  CardBalanceOperationResult,
  CardCreated,
  CardDetails,
  CardOperation,
  CardUserBody,
  CardUserCreated,
  CardUserDetails,
} from '../provider.types';

/**
 * Endpoints 3 to 7, all under `{base_url}/api/action/card` (bearer + x-sp-auth-token). Card
 * operations are GETs whose selector and amount/currency parameter names the provider does not
 * document: they come from CARD_OPERATION_PARAM, CARD_AMOUNT_PARAM and CARD_CURRENCY_PARAM.
 */
@Injectable()
export class CardsClient {
  private readonly cardParams: AppConfig['card'];

  constructor(
    private readonly http: ProviderHttpClient,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.cardParams = config.get('card', { infer: true });
  }

  async createUser(body: CardUserBody): Promise<CardUserCreated> {
    return this.send<CardUserCreated>({ endpoint: 'cards.user.create', method: 'POST', path: '/api/action/card/user', body });
  }

  async getUser(reference: string): Promise<CardUserDetails> {
    return this.send<CardUserDetails>({
      endpoint: 'cards.user.get',
      method: 'GET',
      path: `/api/action/card/user/${encodeURIComponent(reference)}`,
    });
  }

  /** `balance` and `currency` travel as strings, as the provider's card resource says. */
  async createCard(userId: string, body: { balance: string; currency: string }): Promise<CardCreated> {
    return this.send<CardCreated>({
      endpoint: 'cards.card.create',
      method: 'POST',
      path: `/api/action/card/${encodeURIComponent(userId)}`,
      body,
    });
  }

  async getCard(cardId: string): Promise<CardDetails> {
    return this.send<CardDetails>({ endpoint: 'cards.card.get', method: 'GET', path: `/api/action/card/${encodeURIComponent(cardId)}` });
  }

  async topUp(cardId: string, amount: string, currency: string): Promise<CardBalanceOperationResult> {
    return this.operate<CardBalanceOperationResult>(cardId, 'topup', { amount, currency });
  }

  async withdraw(cardId: string, amount: string, currency: string): Promise<CardBalanceOperationResult> {
    return this.operate<CardBalanceOperationResult>(cardId, 'withdraw', { amount, currency });
  }

  /** Freeze. */
  async disable(cardId: string): Promise<Record<string, unknown>> {
    return this.operate(cardId, 'disabled');
  }

  /** Unfreeze. */
  async enable(cardId: string): Promise<Record<string, unknown>> {
    return this.operate(cardId, 'enabled');
  }

  async terminate(cardId: string): Promise<Record<string, unknown>> {
    return this.operate(cardId, 'terminate');
  }

  /**
   * The card's history. The provider does not document the listing's shape: a bare array and an
   * array under `transactions`, `data` or `items` (directly or nested once, `{data: {transactions:
   * [...]}}`) are read; any other answer to a read that succeeded is an empty list and a warning
   * naming the keys it had (never a 502: nothing failed, we just cannot read it).
   */
  async transactions(cardId: string): Promise<unknown[]> {
    const answer = await this.operate<unknown>(cardId, 'transactions');
    const list = transactionListOf(answer);
    if (list) return list;
    const keys = answer && typeof answer === 'object' ? Object.keys(answer).slice(0, 20) : [];
    this.logger.warn(
      { endpoint: 'cards.operation.transactions', answerType: answer === null ? 'null' : typeof answer, keys },
      'card transaction listing in an unknown shape: answered as an empty list',
    );
    return [];
  }

  private async operate<T = Record<string, unknown>>(
    cardId: string,
    operation: CardOperation,
    money?: { amount: string; currency: string },
  ): Promise<T> {
    const { operationParam, amountParam, currencyParam } = this.cardParams;
    const query: Record<string, string> = { [operationParam]: operation };
    if (money) {
      query[amountParam] = money.amount;
      query[currencyParam] = money.currency;
    }
    return this.send<T>({
      endpoint: `cards.operation.${operation}`,
      method: 'GET',
      path: `/api/action/card/transaction/${encodeURIComponent(cardId)}`,
      query,
    });
  }

  private async send<T>(request: Omit<ProviderRequest, 'area' | 'host'>): Promise<T> {
    const { data } = await this.http.send<T>({ ...request, area: 'cards', host: 'base' });
    return data;
  }
}

const LISTING_KEYS = ['transactions', 'data', 'items'] as const;

/** The array of a transaction listing: bare, or under one of LISTING_KEYS, at most two levels down. */
export function transactionListOf(answer: unknown, depth = 0): unknown[] | undefined {
  if (Array.isArray(answer)) return answer as unknown[];
  if (depth >= 2 || !answer || typeof answer !== 'object') return undefined;
  for (const key of LISTING_KEYS) {
    const list = transactionListOf((answer as Record<string, unknown>)[key], depth + 1);
    if (list) return list;
  }
  return undefined;
}
