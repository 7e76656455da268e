import { Module } from '@nestjs/common';
import { AuthGuard } from './auth.guard';
import { JwtVerifier } from './jwt-verifier.service';
import { OidcIssuer } from './oidc-issuer.service';

/** Imported by every module whose controllers use `@Auth(...)`: the guard resolves in that module. Needs the global ConfigModule. */
@Module({
  providers: [OidcIssuer, JwtVerifier, AuthGuard],
  exports: [OidcIssuer, JwtVerifier, AuthGuard],
})
export class AuthModule {}
