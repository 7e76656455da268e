import { claimAtPath, rolesAt } from './roles-claim';

/** The access tokens' shapes of the two identity providers the service is documented with. */
const KEYCLOAK = {
  sub: 'f:1',
  realm_access: { roles: ['default-roles-acme', 'offline_access', 'uma_authorization', 'finance'] },
  resource_access: { account: { roles: ['manage-account'] } },
};
const ENTRA_ID = { sub: 'AAAA', oid: '0000', roles: ['finance', 'admin'] };

describe('claimAtPath', () => {
  it('follows a dotted path through nested objects', () => {
    expect(claimAtPath(KEYCLOAK, 'realm_access.roles')).toEqual(KEYCLOAK.realm_access.roles);
    expect(claimAtPath(KEYCLOAK, 'resource_access.account.roles')).toEqual(['manage-account']);
    expect(claimAtPath(ENTRA_ID, 'roles')).toEqual(['finance', 'admin']);
  });

  it('reads nothing through a missing step, a list, a text or null', () => {
    expect(claimAtPath(KEYCLOAK, 'roles')).toBeUndefined();
    expect(claimAtPath(KEYCLOAK, 'realm_access.groups')).toBeUndefined();
    expect(claimAtPath({ a: ['x'] }, 'a.0')).toBeUndefined();
    expect(claimAtPath({ a: 'text' }, 'a.length')).toBeUndefined();
    expect(claimAtPath({ a: null }, 'a.b')).toBeUndefined();
  });

  it('reads own properties only', () => {
    expect(claimAtPath({}, '__proto__')).toBeUndefined();
    expect(claimAtPath({}, 'constructor.name')).toBeUndefined();
    expect(claimAtPath({ a: {} }, 'a.toString')).toBeUndefined();
  });
});

describe('rolesAt', () => {
  it("reads Keycloak's realm_access.roles, ignoring the roles of other applications", () => {
    expect(rolesAt(KEYCLOAK, 'realm_access.roles', 'ignore')).toEqual(['finance']);
  });

  it("reads Entra ID's top-level roles", () => {
    expect(rolesAt(ENTRA_ID, 'roles', 'ignore')).toEqual(['finance', 'admin']);
    expect(rolesAt(ENTRA_ID, 'roles', 'refuse')).toEqual(['finance', 'admin']);
  });

  it('gives the least privileged role when the claim is missing, null, empty, or holds no known role', () => {
    expect(rolesAt(ENTRA_ID, 'realm_access.roles', 'ignore')).toEqual(['customer']);
    expect(rolesAt({ roles: null }, 'roles', 'refuse')).toEqual(['customer']);
    expect(rolesAt({ roles: [] }, 'roles', 'refuse')).toEqual(['customer']);
    expect(rolesAt({ realm_access: { roles: ['offline_access'] } }, 'realm_access.roles', 'ignore')).toEqual(['customer']);
  });

  it('refuses a claim that is not a list of texts', () => {
    expect(rolesAt({ roles: 'finance' }, 'roles', 'ignore')).toBeUndefined();
    expect(rolesAt({ realm_access: { roles: { finance: true } } }, 'realm_access.roles', 'ignore')).toBeUndefined();
    expect(rolesAt({ roles: ['finance', 7] }, 'roles', 'ignore')).toBeUndefined();
    expect(rolesAt({ roles: 1 }, 'roles', 'refuse')).toBeUndefined();
  });

  it("refuses an unknown name in the service's own tokens, where it is a mistake", () => {
    expect(rolesAt({ roles: ['finance', 'admn'] }, 'roles', 'refuse')).toBeUndefined();
  });

  it('keeps each role once', () => {
    expect(rolesAt({ roles: ['finance', 'finance'] }, 'roles', 'refuse')).toEqual(['finance']);
  });
});
