import { Injectable } from '@nestjs/common';
import { CallbackUrlsService } from './callback-urls.service';
import type { CallbackTransaction, LockedOrder, OrderCallbacks } from './order-callbacks.port';
import { OrderEventsService } from './order-events.service';
import type { CallbackTransition, OrderStatusEvent } from './order.types';
import { OrdersRepository } from './orders.repository';

/** The orders area's side of ORDER_CALLBACKS: what the callbacks area may ask of an order. */
@Injectable()
export class OrderCallbacksAdapter implements OrderCallbacks {
  constructor(
    private readonly orders: OrdersRepository,
    private readonly urls: CallbackUrlsService,
    private readonly events: OrderEventsService,
  ) {}

  verifyCallbackUrl(orderId: string, outcome: string, token: unknown): boolean {
    return this.urls.verify(orderId, outcome, token);
  }

  lockForCallback(run: CallbackTransaction, orderId: string): Promise<LockedOrder | undefined> {
    return this.orders.lockForCallback(run, orderId);
  }

  applyCallbackTransition(
    run: CallbackTransaction,
    order: LockedOrder,
    transition: CallbackTransition,
    callbackId: string,
  ): Promise<OrderStatusEvent | undefined> {
    return this.orders.applyCallbackTransition(run, order, transition, callbackId);
  }

  publishLocal(event: OrderStatusEvent | undefined): void {
    this.events.publishLocal(event);
  }
}
