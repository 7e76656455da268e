import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import type { AuthUser } from '../auth/auth.types';
import { EventDetailDto, EventPageDto, ListEventsQueryDto, RedeliverEventDto, RedeliveriesDto } from './events.dto';
import { EventsService } from './events.service';

/** The events of every transition (docs/api/events-and-webhooks.md): finance reads them, admins redeliver them. */
@ApiTags('Webhooks')
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @Auth('finance')
  @FinanceTask('events', 'List the status changes of orders, card operations and distributions')
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'Events: one per status change of an order, card operation or distribution (finance, admin)',
    description:
      'Newest first. Each event is written in the transaction of its transition (a change that rolls back leaves none), with the resource as its GET answered right after it and its previous status. Filter by `type`, `resourceId` and the window [`from`, `to`).',
  })
  @ApiOkResponse({ type: EventPageDto })
  list(@Query() query: ListEventsQueryDto): Promise<EventPageDto> {
    return this.events.list(query);
  }

  @Get(':id')
  @Auth('finance')
  @FinanceTask('events', 'Open one event with its deliveries to webhooks')
  @ApiOperation({
    operationId: 'getEvent',
    summary: 'One event, with its deliveries to each webhook endpoint and every attempt (finance, admin)',
    description:
      "The event as listed and delivered, and `deliveries`: one per endpoint subscribed when it was written and one per redelivery, each with its endpoint (`endpointOrigin`: scheme, host and port, for every reader; `endpointUrl`, the whole URL, for admins only: its path or query often carry the receiver's own credentials), its status (PENDING, DELIVERED, FAILED), attemptCount, nextAttemptAt and every attempt (`at`, `httpStatus`, `durationMs`, `error`: never an address the endpoint's host resolved to, `responseBody`: the first 1 KiB of the answer).",
  })
  @ApiOkResponse({ type: EventDetailDto })
  @ApiNotFoundResponse({ description: 'No such event' })
  findOne(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<EventDetailDto> {
    return this.events.findOne(id, user);
  }

  @Post(':id/redeliver')
  @HttpCode(201)
  @Auth('admin')
  @ApiOperation({
    operationId: 'redeliverEvent',
    summary: 'Deliver an event again, now',
    description:
      'A new delivery, PENDING and due now, to `endpointId` or, without it, to every ENABLED endpoint subscribed to the type; earlier deliveries are kept as they are. Kept in the audit trail (`event.redelivered`, GET /v1/audit-events).',
  })
  @ApiCreatedResponse({ type: RedeliveriesDto })
  @ApiNotFoundResponse({ description: 'No such event, or no such endpoint' })
  @ApiConflictResponse({ description: '`webhook_endpoint_disabled`: the endpoint asked for is DISABLED' })
  redeliver(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() body: RedeliverEventDto): Promise<RedeliveriesDto> {
    return this.events.redeliver(user, id, body);
  }
}
