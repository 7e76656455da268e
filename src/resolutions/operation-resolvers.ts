import type { FactoryProvider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CARD_OPERATIONS_TABLE, CardOperationsRepository } from '../cards/card-operations.repository';
import type { CardOperationDto } from '../cards/card-operations.dto';
import type { CardOperationRecord, ManualCardOperationOutcome } from '../cards/card.types';
import { CardsService } from '../cards/cards.service';
import type { AppConfig } from '../config/app-config';
import type { DistributionRecord, ManualDistributionOutcome } from '../distributions/distribution.types';
import type { DistributionDto } from '../distributions/distributions.dto';
import { DISTRIBUTIONS_TABLE, DistributionsRepository } from '../distributions/distributions.repository';
import { DistributionsService } from '../distributions/distributions.service';
import { OrderEventsService } from '../orders/order-events.service';
import { ORDER_STATUSES, type ManualOrderOutcome, type OrderRecord } from '../orders/order.types';
import type { OrderDetailDto } from '../orders/orders.dto';
import { OrdersRepository } from '../orders/orders.repository';
import { OrdersService } from '../orders/orders.service';
import { PAYIN_ORDERS_TABLE } from '../orders/payin-orders.table';
import { CARD_STATUS_AFTER } from './resolution-rules';
import { ResolveOperationUseCase, type OperationResolver } from './resolve-operation.use-case';

/** The resolution use case of each operation type: one class, parameterised by its registry entry and its resolver. */
export const RESOLVE_ORDER = Symbol('ResolveOperationUseCase<orders>');
export const RESOLVE_CARD_OPERATION = Symbol('ResolveOperationUseCase<card_operations>');
export const RESOLVE_DISTRIBUTION = Symbol('ResolveOperationUseCase<distributions>');

export type ResolveOrder = ResolveOperationUseCase<ManualOrderOutcome, OrderRecord, OrderDetailDto>;
export type ResolveCardOperation = ResolveOperationUseCase<ManualCardOperationOutcome, CardOperationRecord, CardOperationDto>;
export type ResolveDistribution = ResolveOperationUseCase<ManualDistributionOutcome, DistributionRecord, DistributionDto>;

const timeoutOf = (config: ConfigService<AppConfig, true>) => config.get('provider', { infer: true }).timeoutMs;

/** Orders: the repository's guarded decision writes the history entry and the event its live streams are then told. */
export function orderResolver(
  orders: OrdersRepository,
  events: Pick<OrderEventsService, 'publishLocal'>,
  service: Pick<OrdersService, 'get'>,
): OperationResolver<ManualOrderOutcome, OrderRecord, OrderDetailDto> {
  return {
    table: PAYIN_ORDERS_TABLE,
    find: (id) => orders.findById(id),
    decide: async (id, { status, actor, note }, _order, audit, guard) => {
      const statuses = ORDER_STATUSES.filter((s) => guard.statuses.includes(s));
      const change = await orders.resolveManually(id, status, { ...guard, statuses }, { actor, note }, audit);
      if (change) events.publishLocal(change.event);
      return change !== undefined;
    },
    answer: (user, id) => service.get(user, id),
  };
}

/** Card operations: a freeze, unfreeze or termination declared SUCCEEDED changes the card's status with it (CARD_STATUS_AFTER). */
export function cardOperationResolver(
  operations: CardOperationsRepository,
  service: Pick<CardsService, 'operation'>,
): OperationResolver<ManualCardOperationOutcome, CardOperationRecord, CardOperationDto> {
  return {
    table: CARD_OPERATIONS_TABLE,
    find: (id) => operations.findOperation(id),
    decide: async (id, decision, operation, audit) => {
      const cardStatus = decision.status === 'SUCCEEDED' ? CARD_STATUS_AFTER[operation.kind] : undefined;
      return (await operations.resolveUnknownOperation(id, { ...decision, cardStatus }, audit)) !== undefined;
    },
    answer: (user, id) => service.operation(user, id),
  };
}

export function distributionResolver(
  distributions: DistributionsRepository,
  service: Pick<DistributionsService, 'get'>,
): OperationResolver<ManualDistributionOutcome, DistributionRecord, DistributionDto> {
  return {
    table: DISTRIBUTIONS_TABLE,
    find: (id) => distributions.findById(id),
    decide: async (id, decision, _distribution, audit) => (await distributions.resolveUnknown(id, decision, audit)) !== undefined,
    answer: (_user, id) => service.get(id),
  };
}

/** The three resolution use cases, as Nest providers. */
export const RESOLUTION_PROVIDERS: FactoryProvider[] = [
  {
    provide: RESOLVE_ORDER,
    inject: [OrdersRepository, OrderEventsService, OrdersService, ConfigService],
    useFactory: (orders: OrdersRepository, events: OrderEventsService, service: OrdersService, config: ConfigService<AppConfig, true>) =>
      new ResolveOperationUseCase(orderResolver(orders, events, service), timeoutOf(config)),
  },
  {
    provide: RESOLVE_CARD_OPERATION,
    inject: [CardOperationsRepository, CardsService, ConfigService],
    useFactory: (operations: CardOperationsRepository, service: CardsService, config: ConfigService<AppConfig, true>) =>
      new ResolveOperationUseCase(cardOperationResolver(operations, service), timeoutOf(config)),
  },
  {
    provide: RESOLVE_DISTRIBUTION,
    inject: [DistributionsRepository, DistributionsService, ConfigService],
    useFactory: (distributions: DistributionsRepository, service: DistributionsService, config: ConfigService<AppConfig, true>) =>
      new ResolveOperationUseCase(distributionResolver(distributions, service), timeoutOf(config)),
  },
];
