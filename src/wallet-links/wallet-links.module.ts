import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { ProviderModule } from '../provider/provider.module';
import { WalletLinksController } from './wallet-links.controller';
import { WalletLinksRepository } from './wallet-links.repository';
import { WalletLinksService } from './wallet-links.service';

@Module({
  imports: [AuthModule, DatabaseModule, ProviderModule],
  controllers: [WalletLinksController],
  providers: [WalletLinksService, WalletLinksRepository],
  exports: [WalletLinksService],
})
export class WalletLinksModule {}
