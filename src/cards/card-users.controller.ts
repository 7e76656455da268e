import { Body, Controller, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiGatewayTimeoutResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import type { AuthUser } from '../auth/auth.types';
import { PageQueryDto } from '../common/pagination';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CardUsersService } from './card-users.service';
import { CardUserDetailDto, CardUserDto, CardUserPageDto, CreateCardUserDto } from './card-users.dto';
import { CreateCardDto, CreatedCardDto } from './cards.dto';
import { CardOperationPageDto, ListCardOperationsQueryDto } from './card-operations.dto';
import { provesNotSent } from '../provider/provider.errors';
import { CardsService, withoutCardSecrets } from './cards.service';

@ApiTags('Virtual cards')
@Controller('v1/card-users')
export class CardUsersController {
  constructor(
    private readonly cardUsers: CardUsersService,
    private readonly cards: CardsService,
  ) {}

  @Post()
  @HttpCode(201)
  @Auth('customer')
  @Idempotent('card-users.create', { releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'createCardUser',
    summary: 'Create a card holder at the provider',
    description:
      "Sends the provider's card-user fields (snake_case on the provider side; `billingAddress` travels as `billing_adress`) and stores the user with the provider's user_id and reference. The id number is stored encrypted and never returned. Needs an Idempotency-Key: this creates a provider object.",
  })
  @ApiCreatedResponse({ type: CardUserDto })
  create(@CurrentUser() user: AuthUser, @Body() body: CreateCardUserDto): Promise<CardUserDto> {
    return this.cardUsers.create(user, body);
  }

  @Get()
  @Auth()
  @FinanceTask('payments', 'Find card holders')
  @ApiOperation({
    operationId: 'listCardUsers',
    summary: 'List card users, newest first',
    description: 'A customer sees its own; finance and admin see all.',
  })
  @ApiOkResponse({ type: CardUserPageDto })
  list(@CurrentUser() user: AuthUser, @Query() query: PageQueryDto): Promise<CardUserPageDto> {
    return this.cardUsers.list(user, query);
  }

  @Get(':id')
  @Auth()
  @FinanceTask('payments', 'Open one card holder')
  @ApiOperation({
    operationId: 'getCardUser',
    summary: 'One card user, refreshed from the provider',
    description: 'Merged with what the provider says now (by reference), with the ids of its cards.',
  })
  @ApiOkResponse({ type: CardUserDetailDto })
  @ApiNotFoundResponse({ description: 'No such card user, or not yours' })
  get(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardUserDetailDto> {
    return this.cardUsers.get(user, id);
  }

  @Get(':id/operations')
  @Auth()
  @FinanceTask('payments', "See the operations on a card holder's cards")
  @ApiOperation({
    operationId: 'listCardUserOperations',
    summary: "Operations on this user's cards, newest first",
    description: 'Card creations included, also those that produced no card (FAILED or UNKNOWN).',
  })
  @ApiOkResponse({ type: CardOperationPageDto })
  @ApiNotFoundResponse({ description: 'No such card user, or not yours' })
  operations(
    @CurrentUser() user: AuthUser,
    @Param('id') id: string,
    @Query() query: ListCardOperationsQueryDto,
  ): Promise<CardOperationPageDto> {
    return this.cardUsers.operations(user, id, query);
  }

  @Post(':id/cards')
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  @Auth('customer')
  @Idempotent('cards.create', { storeBody: withoutCardSecrets, releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'createCard',
    summary: 'Issue a virtual card',
    description:
      'Stores a CREATE operation, asks the provider for the card and answers with `cardNumber` and `cvv` this once (Cache-Control: no-store). Only the last four digits, the expiry, the currency, the status and the balance are stored; a replay with the same Idempotency-Key answers the card without them and says so. On a timeout the problem carries the `operationId` of the UNKNOWN operation.',
  })
  @ApiCreatedResponse({ type: CreatedCardDto })
  @ApiNotFoundResponse({ description: 'No such card user, or not yours' })
  @ApiGatewayTimeoutResponse({ description: '`provider_timeout`: the outcome is unknown; the operation (operationId) is UNKNOWN' })
  createCard(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() body: CreateCardDto): Promise<CreatedCardDto> {
    return this.cards.create(user, id, body);
  }
}
