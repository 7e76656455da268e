import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiConflictResponse, ApiGatewayTimeoutResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import type { AuthUser } from '../auth/auth.types';
import { PageQueryDto } from '../common/pagination';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CardAmountDto, CardDetailDto, CardPageDto, ListCardsQueryDto } from './cards.dto';
import {
  CardOperationDto,
  CardOperationPageDto,
  CardOperationResultDto,
  CardSyncResultDto,
  ListCardOperationsQueryDto,
} from './card-operations.dto';
import { CardTransactionPageDto } from './card-transactions.dto';
import { provesNotSent } from '../provider/provider.errors';
import { CardsService } from './cards.service';
import { ChangeCardStateUseCase } from './change-card-state.use-case';
import { MoveCardMoneyUseCase } from './move-card-money.use-case';
import { SyncCardUseCase } from './sync-card.use-case';

const NOT_FOUND = 'No such card, or not yours';
const TERMINATED = '`card_terminated`: the card is terminated and accepts no operation (nothing is sent to the provider)';
const UNKNOWN_OUTCOME =
  '`provider_timeout`: the provider did not answer; the operation (operationId in the problem) is UNKNOWN and is never retried automatically';

@ApiTags('Virtual cards')
@Controller('v1/cards')
export class CardsController {
  constructor(
    private readonly cards: CardsService,
    private readonly moveMoney: MoveCardMoneyUseCase,
    private readonly changeState: ChangeCardStateUseCase,
    private readonly syncCard: SyncCardUseCase,
  ) {}

  @Get()
  @Auth()
  @FinanceTask('payments', 'Find virtual cards')
  @ApiOperation({
    operationId: 'listCards',
    summary: 'List cards, newest first',
    description: 'A customer sees its own; finance and admin see all. Stored state (no provider call).',
  })
  @ApiOkResponse({ type: CardPageDto })
  list(@CurrentUser() user: AuthUser, @Query() query: ListCardsQueryDto): Promise<CardPageDto> {
    return this.cards.list(user, query);
  }

  @Get(':id')
  @Auth()
  @FinanceTask('payments', 'Open one virtual card with its balance')
  @ApiOperation({
    operationId: 'getCard',
    summary: 'One card, refreshed from the provider',
    description: 'Number masked (`**** **** **** 1234`), balance as a decimal string, status ACTIVE, FROZEN or TERMINATED.',
  })
  @ApiOkResponse({ type: CardDetailDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  get(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardDetailDto> {
    return this.cards.get(user, id);
  }

  @Post(':id/topup')
  @HttpCode(200)
  @Auth('customer')
  @Idempotent('cards.topup', { releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'topUpCard',
    summary: 'Top up a card',
    description: "Owner or admin. `amount` in the card's currency. Stored as a TOPUP operation before the provider is asked.",
  })
  @ApiOkResponse({ type: CardOperationResultDto, description: '`{ operationId, newBalance, providerTransactionId, ... }`' })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: `${TERMINATED}; \`card_frozen\`: unfreeze it first; \`idempotency_in_progress\`` })
  @ApiGatewayTimeoutResponse({ description: UNKNOWN_OUTCOME })
  topUp(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() body: CardAmountDto): Promise<CardOperationResultDto> {
    return this.moveMoney.topUp(user, id, body);
  }

  @Post(':id/withdraw')
  @HttpCode(200)
  @Auth('customer')
  @Idempotent('cards.withdraw', { releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'withdrawFromCard',
    summary: 'Withdraw from a card',
    description: "Owner or admin. `amount` in the card's currency. Stored as a WITHDRAW operation before the provider is asked.",
  })
  @ApiOkResponse({ type: CardOperationResultDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: `${TERMINATED}; \`card_frozen\`: unfreeze it first; \`idempotency_in_progress\`` })
  @ApiGatewayTimeoutResponse({ description: UNKNOWN_OUTCOME })
  withdraw(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() body: CardAmountDto): Promise<CardOperationResultDto> {
    return this.moveMoney.withdraw(user, id, body);
  }

  @Post(':id/freeze')
  @HttpCode(200)
  @Auth('customer')
  @ApiOperation({
    operationId: 'freezeCard',
    summary: 'Freeze a card (provider: disabled)',
    description:
      'Owner or admin. Idempotent by outcome: freezing a frozen card answers 200 and leaves it frozen. Every request is recorded.',
  })
  @ApiOkResponse({ type: CardOperationResultDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: TERMINATED })
  freeze(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardOperationResultDto> {
    return this.changeState.freeze(user, id);
  }

  @Post(':id/unfreeze')
  @HttpCode(200)
  @Auth('customer')
  @ApiOperation({
    operationId: 'unfreezeCard',
    summary: 'Unfreeze a card (provider: enabled)',
    description: 'Owner or admin. Idempotent by outcome: unfreezing an active card answers 200 and leaves it active.',
  })
  @ApiOkResponse({ type: CardOperationResultDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: TERMINATED })
  unfreeze(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardOperationResultDto> {
    return this.changeState.unfreeze(user, id);
  }

  @Post(':id/terminate')
  @HttpCode(200)
  @Auth('customer')
  @ApiOperation({
    operationId: 'terminateCard',
    summary: 'Terminate a card: cannot be undone',
    description:
      'Owner or admin. No body. Afterwards every operation on the card is refused with 409 `card_terminated` without asking the provider; reads stay possible.',
  })
  @ApiOkResponse({ type: CardOperationResultDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: TERMINATED })
  terminate(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardOperationResultDto> {
    return this.changeState.terminate(user, id);
  }

  @Post(':id/sync')
  @HttpCode(200)
  @Auth('customer')
  @Idempotent('cards.sync', { releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'syncCard',
    summary: 'Re-read a card from the provider and record what changed',
    description:
      "Owner or admin. No body. Stored as a SYNC operation before the provider is asked; the provider's card details then update the card (status, expiry, balance), and the operation keeps the balance read (`newBalance`) and the change from the balance stored before (`amount`, negative when it went down; `previousBalance` in the answer). A lost answer leaves the operation UNKNOWN and the card as it was.",
  })
  @ApiOkResponse({ type: CardSyncResultDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  @ApiConflictResponse({ description: `${TERMINATED}; \`idempotency_in_progress\`` })
  @ApiGatewayTimeoutResponse({ description: UNKNOWN_OUTCOME })
  sync(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardSyncResultDto> {
    return this.syncCard.sync(user, id);
  }

  @Get(':id/transactions')
  @Auth()
  @FinanceTask('payments', "See a card's transactions, as the provider lists them")
  @ApiOperation({
    operationId: 'listCardTransactions',
    summary: "The card's transactions, from the provider",
    description: 'Also on a terminated card. Recorded as a TRANSACTIONS operation (who read it, when).',
  })
  @ApiOkResponse({ type: CardTransactionPageDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  transactions(@CurrentUser() user: AuthUser, @Param('id') id: string, @Query() query: PageQueryDto): Promise<CardTransactionPageDto> {
    return this.cards.transactions(user, id, query);
  }

  @Get(':id/operations')
  @Auth()
  @FinanceTask('payments', "See a card's top-ups, withdrawals and other operations")
  @ApiOperation({
    operationId: 'listCardOperations',
    summary: "The card's stored operations, newest first",
    description: 'Who asked what and when, and how it ended (PENDING, SUCCEEDED, FAILED, UNKNOWN).',
  })
  @ApiOkResponse({ type: CardOperationPageDto })
  @ApiNotFoundResponse({ description: NOT_FOUND })
  operations(
    @CurrentUser() user: AuthUser,
    @Param('id') id: string,
    @Query() query: ListCardOperationsQueryDto,
  ): Promise<CardOperationPageDto> {
    return this.cards.operations(user, id, query);
  }
}

@ApiTags('Virtual cards')
@Controller('v1/card-operations')
export class CardOperationsController {
  constructor(private readonly cards: CardsService) {}

  @Get(':id')
  @Auth()
  @FinanceTask('payments', 'Open one card operation')
  @ApiOperation({
    operationId: 'getCardOperation',
    summary: 'One card operation',
    description: 'For instance the UNKNOWN operation named in the problem of a timed-out request.',
  })
  @ApiOkResponse({ type: CardOperationDto })
  @ApiNotFoundResponse({ description: 'No such operation, or not yours' })
  get(@CurrentUser() user: AuthUser, @Param('id') id: string): Promise<CardOperationDto> {
    return this.cards.operation(user, id);
  }
}
