import { Module } from '@nestjs/common';
import { AuthGuard } from './auth.guard';
import { JwtVerifier } from './jwt-verifier.service';

/** Imported by every module whose controllers use `@Auth(...)`: the guard resolves in that module. Needs the global ConfigModule. */
@Module({
  providers: [JwtVerifier, AuthGuard],
  exports: [JwtVerifier, AuthGuard],
})
export class AuthModule {}
