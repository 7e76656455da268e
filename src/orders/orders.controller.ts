import { Readable } from 'node:stream';
import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  ApiBadGatewayResponse,
  ApiCreatedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { auditEventOf, AuditService } from '../audit/audit.service';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import type { AuthUser } from '../auth/auth.types';
import { ServerSentEvents } from '../common/server-sent-events';
import { Idempotent } from '../idempotency/idempotent.decorator';
import {
  CreateOrderDto,
  ExportOrdersQueryDto,
  ListOrdersQueryDto,
  OrderDetailDto,
  OrderDto,
  OrderPageDto,
  OrderStatusEventDto,
} from './orders.dto';
import { parseLastEventId, type OrderStreamMessage } from './order-streams';
import { provesNotSent } from '../provider/provider.errors';
import { CUSTOMER_REFUSAL_HEADERS, CUSTOMER_SHARE_HEADERS, SpendsProviderBudget } from '../provider/spends-provider-budget.decorator';
import { OrdersService } from './orders.service';

@ApiTags('Pay-in orders')
@Controller('v1/orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly audit: AuditService,
  ) {}

  @Post()
  @HttpCode(201)
  @Auth('customer')
  @Idempotent('orders.create', { releaseOn: provesNotSent, claimInResourceStatement: true })
  @SpendsProviderBudget()
  @ApiOperation({
    operationId: 'createOrder',
    summary: 'Collect a payment from a mobile wallet',
    description:
      'Stores the order, sends the pay-in to the provider and answers with the order: PROCESSING (accepted; the outcome arrives by callback), FAILED (refused by the provider, see failureReason) or UNKNOWN (the provider’s answer was lost: the money may move; never resubmitted automatically). Watch it with GET /v1/orders/{id}/events.',
  })
  @ApiCreatedResponse({ type: OrderDto, headers: CUSTOMER_SHARE_HEADERS })
  @ApiTooManyRequestsResponse({
    description:
      'Nothing was sent and no order stored; the key may be reused. `customer_limit_reached`: your hourly share of provider calls is spent (Retry-After, `retryAfterSeconds`, RateLimit fields); `provider_budget_exhausted`: the hourly provider budget of the whole service is spent (Retry-After, `retryAfterSeconds`)',
    headers: CUSTOMER_REFUSAL_HEADERS,
  })
  @ApiBadGatewayResponse({
    description:
      'Nothing was sent to the provider (`outcomeKnown: true`); the order is stored FAILED and the Idempotency-Key may be reused: `provider_unreachable` (connection refused, unknown host), `provider_authentication_failed` (no provider token could be had), `provider_unauthorized` (the provider refused the service credentials)',
  })
  @ApiServiceUnavailableResponse({
    description:
      'Nothing was sent to the provider (`outcomeKnown: true`); the key may be reused: `provider_rate_limited` (the provider is rate limiting the service; Retry-After), `provider_token_unavailable` (no provider token could be had in time)',
  })
  create(@CurrentUser() user: AuthUser, @Body() body: CreateOrderDto): Promise<OrderDto> {
    return this.orders.create(user, body);
  }

  @Get()
  @Auth()
  @FinanceTask('payments', 'Find pay-in orders by status, currency, date or review flag')
  @ApiOperation({
    operationId: 'listOrders',
    summary: 'List orders, newest first',
    description: 'A customer sees its own orders; finance and admin see all.',
  })
  @ApiOkResponse({ type: OrderPageDto })
  list(@CurrentUser() user: AuthUser, @Query() query: ListOrdersQueryDto): Promise<OrderPageDto> {
    return this.orders.list(user, query);
  }

  @Get('export.csv')
  @Auth('finance')
  @FinanceTask('export', 'Download pay-in orders as a CSV file that Excel opens as is')
  @ApiOperation({
    operationId: 'exportOrdersCsv',
    summary: 'Export orders as CSV (finance)',
    description:
      'Same filters as the list, all pages, newest first. RFC 4180, UTF-8, ready for Excel: the file starts with a UTF-8 byte order mark so that accented names show correctly (`bom=false` leaves it out), and a text cell a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage return) is prefixed with an apostrophe, so that it opens as text; the amount is a number (a negative one too) and is not prefixed. Every export is kept in the audit trail with its filters.',
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({
    description: 'Streamed CSV, a header line then one line per order',
    content: { 'text/csv': { schema: { type: 'string', example: 'id,reference,createdAt,updatedAt,status,amount,currency,…\r\n' } } },
  })
  async exportCsv(@CurrentUser() user: AuthUser, @Query() query: ExportOrdersQueryDto, @Res() reply: FastifyReply): Promise<void> {
    const { bom: bomAsked, ...filters } = query;
    // Excel-ready unless asked otherwise: without the byte order mark Excel reads UTF-8 as its local code page.
    const bom = bomAsked !== false;
    // Recorded before the first byte: an export that could not be audited does not happen.
    await this.audit.record(auditEventOf(user, 'orders.exported', { type: 'orders_export', id: null }, { details: { filters, bom } }));
    const lines = this.orders.exportCsv(user, filters);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    await reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="orders-${stamp}.csv"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(bom ? withByteOrderMark(lines) : lines));
  }

  @Get(':id')
  @Auth()
  @FinanceTask('payments', 'Open one pay-in order with its history and callbacks')
  @ApiOperation({
    operationId: 'getOrder',
    summary: 'One order with its status history and callbacks',
    description:
      'The order, every status change in order (from, to, reason, when) and a summary of the provider callbacks received for it. A customer sees its own orders only: another one answers 404.',
  })
  @ApiOkResponse({ type: OrderDetailDto })
  @ApiNotFoundResponse({ description: 'No such order, or not yours' })
  get(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<OrderDetailDto> {
    return this.orders.get(user, id);
  }

  @Get(':id/events')
  @Auth()
  @FinanceTask('payments', 'Follow one pay-in order live until it succeeds or fails')
  @ApiOperation({
    operationId: 'streamOrderEvents',
    summary: 'Live status (Server-Sent Events)',
    description:
      'A `status` event with the current status, then one per transition; the stream ends after SUCCEEDED or FAILED. Each event has an `id:`, the id of the stored status change, the same on every instance. A comment line (`: keep-alive`) every SSE_KEEPALIVE_SECONDS (15 s) keeps idle proxies from cutting it. An instance that shuts down ends its streams with a `retry:` field (1 to 3 s): reconnect with `Last-Event-ID` to receive what was missed. At most SSE_MAX_STREAMS_PER_USER streams per user and SSE_MAX_STREAMS per instance are open at once; beyond, 429 with Retry-After.',
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description:
      "The `id:` of the last event received, as EventSource sends it when it reconnects. The stream then starts with this order's status events after that one, in order (none when nothing happened since; it ends at once when that event was the final status), then continues live. An id that is not a positive integer, or not one of this order's events, is ignored: the stream starts with the current status.",
    schema: { type: 'string', pattern: '^[1-9][0-9]{0,18}$', example: '1042' },
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ type: OrderStatusEventDto, description: 'text/event-stream of `status` events whose data is this object' })
  @ApiNotFoundResponse({ description: 'No such order, or not yours' })
  @ApiTooManyRequestsResponse({
    description: 'Too many open streams for this user or this instance (Retry-After); close one or retry later',
  })
  async events(
    @CurrentUser() user: AuthUser,
    @Param('id') id: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.orders.streamStatus(user, id, new ServerSentEvents(reply, toEventStreamText), parseLastEventId(lastEventId));
  }
}

/** One message of a live stream in text/event-stream form (JSON never holds a raw line break). */
function toEventStreamText(message: OrderStreamMessage): string {
  if (message.kind === 'keepAlive') return ': keep-alive\n\n';
  if (message.kind === 'reconnect') return `retry: ${message.retryMs}\n\n`;
  const { event } = message;
  const data = { orderId: event.orderId, status: event.status, fromStatus: event.fromStatus, reason: event.reason, at: event.at };
  return `event: status\nid: ${event.changeId}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** U+FEFF first: Excel reads the file as UTF-8 only when it starts with the byte order mark. */
async function* withByteOrderMark(lines: AsyncIterable<string>): AsyncGenerator<string> {
  yield '\uFEFF';
  yield* lines;
}
