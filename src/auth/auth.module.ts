import { Global, Module } from '@nestjs/common';
import { AuthGuard } from './auth.guard';
import { JwtVerifier } from './jwt-verifier.service';

/** Global so that every feature module's `@Auth(...)` finds the guard's dependencies. Needs the global ConfigModule. */
@Global()
@Module({
  providers: [JwtVerifier, AuthGuard],
  exports: [JwtVerifier, AuthGuard],
})
export class AuthModule {}
