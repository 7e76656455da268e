import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import type { AuthUser } from '../auth/auth.types';
import {
  CreatedWebhookEndpointDto,
  CreateWebhookEndpointDto,
  ListWebhookEndpointsQueryDto,
  UpdateWebhookEndpointDto,
  WebhookEndpointDto,
  WebhookEndpointPageDto,
  WebhookEndpointSecretDto,
} from './webhook-endpoints.dto';
import { WebhookEndpointsService } from './webhook-endpoints.service';

const BAD_BODY =
  '`validation_failed`: errors by field (an unknown event type in `events` names it); `webhook_url_not_allowed`: the URL breaks the URL policy (error on `url`)';

@ApiTags('Webhooks')
@Controller('v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Post()
  @HttpCode(201)
  @Auth('admin')
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Register a webhook endpoint',
    description:
      'Events of the subscribed types (`events`; none: every type) written from now on are POSTed to `url`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer carries the signing `secret`, shown this once: it is stored encrypted and never answered again. The URL must be `https://` and resolve only to public addresses (400 `webhook_url_not_allowed`). Audited (`webhook_endpoint.created`). Admin only.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointDto })
  @ApiBadRequestResponse({ description: BAD_BODY })
  create(@CurrentUser() user: AuthUser, @Body() body: CreateWebhookEndpointDto): Promise<CreatedWebhookEndpointDto> {
    return this.endpoints.create(user, body);
  }

  @Get()
  @Auth('admin')
  @ApiOperation({
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints, newest first',
    description: 'Without their secrets. Admin only.',
  })
  @ApiOkResponse({ type: WebhookEndpointPageDto })
  list(@Query() query: ListWebhookEndpointsQueryDto): Promise<WebhookEndpointPageDto> {
    return this.endpoints.list(query);
  }

  @Get(':id')
  @Auth('admin')
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'One webhook endpoint', description: 'Without its secret. Admin only.' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiNotFoundResponse({ description: 'No such webhook endpoint' })
  get(@Param('id') id: string): Promise<WebhookEndpointDto> {
    return this.endpoints.get(id);
  }

  @Patch(':id')
  @Auth('admin')
  @ApiOperation({
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint',
    description:
      'Changes the members the body names (`description: null` removes it); a new `url` passes the URL policy again. `status: DISABLED` stops new deliveries to it; `ENABLED` resumes them for events written from then on. Audited (`webhook_endpoint.updated`, with what changed). Admin only.',
  })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiBadRequestResponse({ description: BAD_BODY })
  @ApiNotFoundResponse({ description: 'No such webhook endpoint' })
  update(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() body: UpdateWebhookEndpointDto): Promise<WebhookEndpointDto> {
    return this.endpoints.update(user, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @Auth('admin')
  @ApiOperation({
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description: 'With its deliveries and their attempts, pending ones included. Audited (`webhook_endpoint.deleted`). Admin only.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiNotFoundResponse({ description: 'No such webhook endpoint' })
  async delete(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<void> {
    await this.endpoints.delete(user, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Auth('admin')
  @ApiOperation({
    operationId: 'rotateWebhookEndpointSecret',
    summary: "Rotate a webhook endpoint's signing secret",
    description:
      'A new secret, shown in this answer only. For 24 hours every delivery carries two signatures, one per secret (the new one first), so the receiver can switch at its own pace; then only the new one signs. A second rotation within the 24 hours stops the oldest secret at once. Audited (`webhook_endpoint.secret_rotated`). Admin only.',
  })
  @ApiOkResponse({ type: WebhookEndpointSecretDto })
  @ApiNotFoundResponse({ description: 'No such webhook endpoint' })
  rotateSecret(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<WebhookEndpointSecretDto> {
    return this.endpoints.rotateSecret(user, id);
  }
}
