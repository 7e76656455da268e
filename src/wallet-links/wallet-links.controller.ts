import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiGatewayTimeoutResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import type { AuthUser } from '../auth/auth.types';
import { CUSTOMER_REFUSAL_HEADERS, CUSTOMER_SHARE_HEADERS, SpendsProviderBudget } from '../provider/spends-provider-budget.decorator';
import { CreateWalletLinkDto, ListWalletLinksQueryDto, WalletLinkDto, WalletLinkPageDto } from './wallet-links.dto';
import { WalletLinksService } from './wallet-links.service';

@ApiTags('Wallet links')
@Controller('v1/wallet-links')
export class WalletLinksController {
  constructor(private readonly links: WalletLinksService) {}

  @Post()
  @HttpCode(201)
  // Finance and admin may link any email; a customer only its own (the service checks).
  @Auth('customer', 'finance')
  @FinanceTask('payments', 'Link a wallet user so that distributions can pay them')
  @SpendsProviderBudget()
  @ApiOperation({
    operationId: 'createWalletLink',
    summary: 'Link a wallet user at the provider',
    description:
      "Calls the provider's link/new with the email and phone, stores the returned matricule and keeps the provider's apikey encrypted (never returned). A customer links only its own email: the token's `email` claim with `email_verified: true` (else 403 `wallet_link_email_not_verified`, before any provider call); finance and admin may link any email. One link per email: a second request for an email already linked here is 409 `wallet_link_exists` (for your own link the problem carries `walletLinkId` and `matricule`), with no provider call. Concurrent requests for one email (on any instance) make one provider call: while it runs, the others are 409 `wallet_link_in_progress` with `Retry-After`; a retry then gets the link (or, if that call failed, makes its own).",
  })
  @ApiCreatedResponse({ type: WalletLinkDto, headers: CUSTOMER_SHARE_HEADERS })
  @ApiBadRequestResponse({ description: '`validation_failed`: errors by field (email, phone digits only, phoneCountry + and digits)' })
  @ApiConflictResponse({
    description:
      '`wallet_link_exists`: this email already has a wallet link; `wallet_link_in_progress`: another request is linking this email right now (Retry-After)',
  })
  @ApiUnprocessableEntityResponse({
    description: '`provider_link_rejected`: the provider refused the link; its message is in `providerMessage`',
  })
  @ApiTooManyRequestsResponse({
    description:
      'Nothing was sent: `customer_limit_reached`: your hourly share of provider calls is spent (Retry-After, RateLimit fields); `provider_budget_exhausted`: the hourly budget of provider calls is spent (Retry-After)',
    headers: CUSTOMER_REFUSAL_HEADERS,
  })
  @ApiGatewayTimeoutResponse({ description: '`provider_timeout`: the provider did not answer; the link may exist at the provider' })
  create(@CurrentUser() user: AuthUser, @Body() body: CreateWalletLinkDto): Promise<WalletLinkDto> {
    return this.links.create(user, body);
  }

  @Get()
  @Auth()
  @FinanceTask('payments', 'Find wallet links')
  @ApiOperation({
    operationId: 'listWalletLinks',
    summary: 'List wallet links, newest first',
    description: 'A customer sees its own links; finance and admin see all.',
  })
  @ApiOkResponse({ type: WalletLinkPageDto })
  list(@CurrentUser() user: AuthUser, @Query() query: ListWalletLinksQueryDto): Promise<WalletLinkPageDto> {
    return this.links.list(user, query);
  }

  @Get(':id')
  @Auth()
  @FinanceTask('payments', 'Open one wallet link')
  @ApiOperation({
    operationId: 'getWalletLink',
    summary: 'One wallet link',
    description: 'As stored. A customer sees its own links only: another one answers 404.',
  })
  @ApiOkResponse({ type: WalletLinkDto })
  @ApiNotFoundResponse({ description: 'No such wallet link, or not yours' })
  get(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<WalletLinkDto> {
    return this.links.get(user, id);
  }
}
