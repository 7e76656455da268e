import { Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Auth } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import { NotFoundError } from '../common/domain-error';
import { CallbackAckDto, CallbackPageDto, ListCallbacksQueryDto } from './callbacks.dto';
import { CallbacksService } from './callbacks.service';

const CALLBACK_PATH = 'payin/:orderId/:outcome';

@ApiTags('Provider callbacks')
@Controller('v1/callbacks')
export class CallbacksController {
  constructor(private readonly callbacks: CallbacksService) {}

  @Post(CALLBACK_PATH)
  @HttpCode(200)
  @ApiOperation({
    operationId: 'receivePayinCallback',
    summary: 'Provider notification (successUrl / failureUrl)',
    description:
      'Called by the provider, not by clients. Accepts GET and POST with any content type or none. 200 once the callback is stored; 404 for a missing or wrong token; 5xx if it could not be stored, so that the provider retries.',
  })
  @ApiOkResponse({ type: CallbackAckDto })
  @ApiNotFoundResponse({ description: 'Unknown order or wrong token (recorded as REJECTED)' })
  receivePost(
    @Req() request: FastifyRequest,
    @Param('orderId') orderId: string,
    @Param('outcome') outcome: string,
  ): Promise<CallbackAckDto> {
    return this.receive(request, orderId, outcome);
  }

  @Get(CALLBACK_PATH)
  @ApiExcludeEndpoint()
  receiveGet(
    @Req() request: FastifyRequest,
    @Param('orderId') orderId: string,
    @Param('outcome') outcome: string,
  ): Promise<CallbackAckDto> {
    // Fastify answers HEAD with the GET route's handler; only GET and POST are the provider's, and
    // a HEAD must not decide an order nor be stored: it gets the 404 of any other method.
    if (request.method !== 'GET') return Promise.reject(new NotFoundError('No such callback URL.'));
    return this.receive(request, orderId, outcome);
  }

  @Get()
  @Auth('finance')
  @FinanceTask('callbacks', 'List what the provider told the service about orders')
  @ApiOperation({
    operationId: 'listCallbacks',
    summary: 'Stored provider callbacks, newest first (finance)',
    description:
      'Every call received on the callback URLs, as received (method, query, headers, raw body) with how it was handled (`result`), also the rejected ones. Filter by order, outcome, result and time window.',
  })
  @ApiOkResponse({ type: CallbackPageDto })
  list(@Query() query: ListCallbacksQueryDto): Promise<CallbackPageDto> {
    return this.callbacks.list(query);
  }

  private receive(request: FastifyRequest, orderId: string, outcome: string): Promise<CallbackAckDto> {
    const contentType = request.headers['content-type'];
    const raw = (request as FastifyRequest & { rawBody?: string }).rawBody;
    return this.callbacks.receive({
      pathOrderId: orderId,
      outcome,
      method: request.method,
      query: { ...(request.query as Record<string, unknown>) },
      headers: { ...request.headers },
      contentType: typeof contentType === 'string' ? contentType : null,
      rawBody: raw ?? null,
      remoteIp: request.ip ?? null,
      requestId: String(request.id),
    });
  }
}
