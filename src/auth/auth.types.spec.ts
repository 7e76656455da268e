import { canSee, visibleOwnerOf, type AuthUser, type Role } from './auth.types';

const userWith = (...roles: Role[]): AuthUser => ({ id: 'alice', roles });

describe('the visibility rule', () => {
  it('a customer sees only what it owns, and its lists are limited to it', () => {
    const customer = userWith('customer');
    expect(canSee(customer, 'alice')).toBe(true);
    expect(canSee(customer, 'bob')).toBe(false);
    expect(visibleOwnerOf(customer)).toBe('alice');
  });

  it.each([['finance'], ['admin']] as [Role][])('%s sees every owner, in single reads and in lists', (role) => {
    expect(canSee(userWith(role), 'bob')).toBe(true);
    expect(visibleOwnerOf(userWith(role))).toBeUndefined();
    expect(visibleOwnerOf(userWith('customer', role))).toBeUndefined();
  });
});
