import { CardOperationsSweeper } from './card-operations.sweeper';
import { Module } from '@nestjs/common';
import { CardUsersController } from './card-users.controller';
import { CardUsersService } from './card-users.service';
import { CardOperationsController, CardsController } from './cards.controller';
import { CardsRepository } from './cards.repository';
import { CardsService } from './cards.service';

/** Virtual cards: card users, cards and card operations (merchant-api.md, "Virtual cards"). */
@Module({
  controllers: [CardUsersController, CardsController, CardOperationsController],
  providers: [CardUsersService, CardsService, CardsRepository, CardOperationsSweeper],
  exports: [CardsService, CardUsersService, CardsRepository],
})
export class CardsModule {}
