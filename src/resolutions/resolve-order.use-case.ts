import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { UUID_PATTERN } from '../common/pagination';
import { interruptedAfterSeconds } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { OrderEventsService } from '../orders/order-events.service';
import type { OrderDetailDto } from '../orders/orders.dto';
import { OrdersRepository } from '../orders/orders.repository';
import { OrdersService } from '../orders/orders.service';
import type { ResolveOrderDto } from './resolutions.dto';
import { OrderNotResolvableError, orderStatusMayBeResolved, RESOLVABLE_ORDER_STATUSES } from './resolution-rules';

/**
 * `POST /v1/orders/{id}/resolution`: a person decides an order the provider left undecided. The
 * repository's guarded UPDATE is the judge (a callback may decide the order meanwhile); the read
 * before it only spares a transaction for what can never be resolved.
 */
@Injectable()
export class ResolveOrderUseCase {
  private readonly providerTimeoutMs: number;

  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: OrderEventsService,
    private readonly ordersService: OrdersService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.providerTimeoutMs = config.get('provider', { infer: true }).timeoutMs;
  }

  async execute(user: AuthUser, id: string, dto: ResolveOrderDto): Promise<OrderDetailDto> {
    const order = UUID_PATTERN.test(id) ? await this.orders.findById(id) : undefined;
    if (!order) throw new NotFoundError(`No order ${id}.`);
    const window = interruptedAfterSeconds(this.providerTimeoutMs);
    if (!orderStatusMayBeResolved(order.status)) throw new OrderNotResolvableError(id, order.status, window);
    const change = await this.orders.resolveManually(
      id,
      dto.status,
      { statuses: RESOLVABLE_ORDER_STATUSES, pendingOlderThanSeconds: window },
      { actor: user.id, note: dto.note },
      auditEventOf(user, 'order.resolved', { type: 'order', id }, { note: dto.note }),
    );
    if (!change) {
      const now = await this.orders.findById(id);
      throw new OrderNotResolvableError(id, now?.status ?? order.status, window);
    }
    this.events.publishLocal(change.event);
    return this.ordersService.get(user, id);
  }
}
