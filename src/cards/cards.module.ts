import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ProviderModule } from '../provider/provider.module';
import { ProviderOperationsModule } from '../provider-operations/provider-operations.module';
import { CardUsersController } from './card-users.controller';
import { CardUsersService } from './card-users.service';
import { CardOperationsController, CardsController } from './cards.controller';
import { CardOperationsRepository } from './card-operations.repository';
import { CardUsersRepository } from './card-users.repository';
import { CardsRepository } from './cards.repository';
import { CardListsRepository } from './card-lists.repository';
import { CardsService } from './cards.service';
import { CardOperationRunner } from './card-operation-runner';
import { ChangeCardStateUseCase } from './change-card-state.use-case';
import { MoveCardMoneyUseCase } from './move-card-money.use-case';
import { SyncCardUseCase } from './sync-card.use-case';

/** Virtual cards: card users, cards and card operations (merchant-api.md, "Virtual cards"). */
@Module({
  imports: [AuthModule, DatabaseModule, IdempotencyModule, ProviderModule, ProviderOperationsModule],
  controllers: [CardUsersController, CardsController, CardOperationsController],
  providers: [
    CardUsersService,
    CardsService,
    CardOperationRunner,
    MoveCardMoneyUseCase,
    ChangeCardStateUseCase,
    SyncCardUseCase,
    CardUsersRepository,
    CardsRepository,
    CardOperationsRepository,
    CardListsRepository,
  ],
  exports: [CardsService, CardUsersService, CardOperationsRepository],
})
export class CardsModule {}
