import { Module } from '@nestjs/common';
import { WalletLinksController } from './wallet-links.controller';
import { WalletLinksRepository } from './wallet-links.repository';
import { WalletLinksService } from './wallet-links.service';

@Module({
  controllers: [WalletLinksController],
  providers: [WalletLinksService, WalletLinksRepository],
  exports: [WalletLinksService],
})
export class WalletLinksModule {}
