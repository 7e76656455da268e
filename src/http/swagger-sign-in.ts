import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject, SwaggerCustomOptions } from '@nestjs/swagger';
import type { OidcMetadata } from '../auth/oidc-discovery';
import { OidcIssuer } from '../auth/oidc-issuer.service';
import type { AppConfig } from '../config/app-config';

/** The name of the OpenID Connect sign-in in the documents' `securitySchemes` (beside `bearer`, a pasted token). */
export const SIGN_IN_SCHEME = 'companySignIn';
/** Where the provider sends the person back; swagger-ui-dist's page, served by SwaggerModule under /docs. */
export const OAUTH2_REDIRECT_PATH = '/docs/oauth2-redirect.html';

/**
 * What Swagger UI runs on every answer of "Try it out" (a function is sent to the page as its
 * source: SwaggerModule writes it into swagger-ui-init.js). Swagger UI does not renew an expired
 * token by itself: on a 401 while signed in with the company's account, the page forgets the token
 * and opens Authorize again, so that the person signs in anew (usually one click: the provider
 * still knows them) instead of meeting 401s. Written as JavaScript text so that no compiler adds
 * anything the page lacks.
 */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the page's code, never run here
const signInAgainOn401 = new Function(
  'response',
  `
  var ui = window.ui;
  if (response && response.status === 401 && ui && ui.authSelectors.authorized().get(${JSON.stringify(SIGN_IN_SCHEME)})) {
    ui.authActions.logout([${JSON.stringify(SIGN_IN_SCHEME)}]);
    setTimeout(function () {
      var authorize = document.querySelector('.auth-wrapper button.authorize');
      if (authorize) authorize.click();
    }, 0);
  }
  return response;
`,
);

/**
 * The document with the company's sign-in: an `oauth2` security scheme (authorization code with
 * PKCE, the provider's authorization and token URLs from discovery) offered on every operation that
 * takes the bearer token, as an alternative to pasting one. A copy: the served document is cached.
 */
export function withSignIn(document: OpenAPIObject, metadata: OidcMetadata): OpenAPIObject {
  const signedIn = structuredClone(document);
  signedIn.components = {
    ...signedIn.components,
    securitySchemes: {
      ...signedIn.components?.securitySchemes,
      [SIGN_IN_SCHEME]: {
        type: 'oauth2',
        description: "Sign in with the company's account (OpenID Connect, authorization code with PKCE).",
        flows: {
          authorizationCode: { authorizationUrl: metadata.authorizationEndpoint, tokenUrl: metadata.tokenEndpoint, scopes: {} },
        },
      },
    },
  };
  for (const item of Object.values(signedIn.paths)) {
    for (const operation of Object.values(item as Record<string, { security?: Record<string, string[]>[] }>)) {
      if (typeof operation !== 'object' || !Array.isArray(operation.security)) continue;
      if (operation.security.some((requirement) => 'bearer' in requirement)) operation.security.push({ [SIGN_IN_SCHEME]: [] });
    }
  }
  return signedIn;
}

/**
 * Swagger UI's sign-in at the company's OpenID Connect provider, for SwaggerModule.setup: nothing
 * without AUTH_OIDC_SWAGGER_CLIENT_ID. The provider's URLs are added to the document on each
 * request (patchDocumentOnRequest) from the discovery OidcIssuer made, so that a provider that
 * was unreachable at start-up appears once it answers; until then only the pasted token is offered.
 */
export function swaggerSignIn(
  app: NestFastifyApplication,
  config: AppConfig,
): Pick<SwaggerCustomOptions, 'swaggerOptions' | 'patchDocumentOnRequest'> {
  const oidc = config.auth.oidc;
  if (!oidc?.swaggerClientId) return {};
  const issuer = app.get(OidcIssuer);
  // The served documents are built once and the provider's URLs do not change once discovered: each signed-in copy is made once.
  const signedIn = new WeakMap<OpenAPIObject, OpenAPIObject>();
  return {
    swaggerOptions: {
      initOAuth: { clientId: oidc.swaggerClientId, usePkceWithAuthorizationCodeGrant: true, scopes: oidc.swaggerScopes },
      // One redirect URI to register, whichever document the person signed in from.
      oauth2RedirectUrl: `${config.publicBaseUrl}${OAUTH2_REDIRECT_PATH}`,
      responseInterceptor: signInAgainOn401,
    },
    patchDocumentOnRequest: async (_request, _response, document) => {
      const metadata = issuer.current() ?? (await issuer.metadata().catch(() => undefined));
      if (!metadata) return document;
      let copy = signedIn.get(document);
      if (!copy) signedIn.set(document, (copy = withSignIn(document, metadata)));
      return copy;
    },
  };
}

/** Origins the Swagger UI's page must reach besides this service: the provider's, where the browser exchanges the code for a token. */
export function signInConnectSources(config: AppConfig): string[] {
  const oidc = config.auth.oidc;
  return oidc?.swaggerClientId ? [new URL(oidc.issuer).origin] : [];
}
