import { Injectable } from '@nestjs/common';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { UUID_PATTERN } from '../common/pagination';
import { OrderEventsService } from '../orders/order-events.service';
import type { OrderDetailDto } from '../orders/orders.dto';
import { OrdersRepository } from '../orders/orders.repository';
import { OrdersService } from '../orders/orders.service';
import type { ClearOrderReviewDto } from './resolutions.dto';
import { OrderReviewNotNeededError } from './resolution-rules';

/** `POST /v1/orders/{id}/review`: a person looked at a flagged order; the flag goes, the status stays. */
@Injectable()
export class ClearOrderReviewUseCase {
  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: OrderEventsService,
    private readonly ordersService: OrdersService,
  ) {}

  async execute(user: AuthUser, id: string, dto: ClearOrderReviewDto): Promise<OrderDetailDto> {
    const order = UUID_PATTERN.test(id) ? await this.orders.findById(id) : undefined;
    if (!order) throw new NotFoundError(`No order ${id}.`);
    if (!order.needsReview) throw new OrderReviewNotNeededError(id);
    const change = await this.orders.clearReview(
      id,
      { actor: user.id, note: dto.note },
      auditEventOf(user, 'order.review_cleared', { type: 'order', id }, { note: dto.note }),
    );
    // Cleared meanwhile by another person: the second one has nothing left to clear.
    if (!change) throw new OrderReviewNotNeededError(id);
    this.events.publishLocal(change.event);
    return this.ordersService.get(user, id);
  }
}
