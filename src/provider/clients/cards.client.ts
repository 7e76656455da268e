import { Injectable } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ProviderHttpClient } from '../provider-http.client';
import type { ProviderRequest } from '../provider-transport';
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
  constructor(
    private readonly http: ProviderHttpClient,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async createUser(body: CardUserBody): Promise<CardUserCreated> {
    return this.send<CardUserCreated>({ endpoint: 'cards.user.create', method: 'POST', path: '/api/action/card/user', body });
  }

  async getUser(reference: string): Promise<CardUserDetails> {
    return this.send<CardUserDetails>({ endpoint: 'cards.user.get', method: 'GET', path: `/api/action/card/user/${encodeURIComponent(reference)}` });
  }

  /** `balance` and `currency` travel as strings, as the provider's card resource says. */
  async createCard(userId: string, body: { balance: string; currency: string }): Promise<CardCreated> {
    return this.send<CardCreated>({ endpoint: 'cards.card.create', method: 'POST', path: `/api/action/card/${encodeURIComponent(userId)}`, body });
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

  async transactions(cardId: string): Promise<unknown> {
    return this.operate<unknown>(cardId, 'transactions');
  }

  private async operate<T = Record<string, unknown>>(cardId: string, operation: CardOperation, money?: { amount: string; currency: string }): Promise<T> {
    const { operationParam, amountParam, currencyParam } = this.config.card;
    const query: Record<string, string> = { [operationParam]: operation };
    if (money) {
      query[amountParam] = money.amount;
      query[currencyParam] = money.currency;
    }
    return this.send<T>({ endpoint: `cards.operation.${operation}`, method: 'GET', path: `/api/action/card/transaction/${encodeURIComponent(cardId)}`, query });
  }

  private async send<T>(request: Omit<ProviderRequest, 'area' | 'host'>): Promise<T> {
    const { data } = await this.http.send<T>({ ...request, area: 'cards', host: 'base' });
    return data;
  }
}
