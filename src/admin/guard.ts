import type { FastifyRequest } from 'fastify';
import { bearerOf } from '../core/auth.js';
import type { Ctx } from '../core/context.js';
import { ApiError } from '../core/errors.js';
import { sameSecret } from '../core/secrets.js';

export interface AdminGuard {
  /** Throws 401 unless the request carries the admin key (Authorization: Bearer, or x-admin-key). */
  check(request: FastifyRequest): void;
  /** The admin key in force. */
  key(): string;
  setKey(key: string): void;
  /** Adds a rule that may refuse a credential outright, before it is compared with the admin key. */
  refuse(rule: (credential: string) => ApiError | undefined): void;
}

/** The admin key check the control plane and every module's admin routes use. */
export function createAdminGuard(initialKey: string): AdminGuard {
  let adminKey = initialKey;
  const rules: ((credential: string) => ApiError | undefined)[] = [];
  return {
    check(request) {
      const given = (request.headers['x-admin-key'] as string | undefined) ?? bearerOf(request);
      if (given) for (const rule of rules) {
        const refused = rule(given);
        if (refused) throw refused;
      }
      if (!given || !sameSecret(given, adminKey)) {
        throw new ApiError('authentication_error', 'The control plane needs the admin key: "Authorization: Bearer <ADMIN_KEY>".', { code: 'invalid_admin_key' });
      }
    },
    key: () => adminKey,
    setKey: (key) => {
      adminKey = key;
    },
    refuse: (rule) => void rules.push(rule),
  };
}

/** The admin guard published by the admin module. */
export const adminOf = (ctx: Ctx): AdminGuard => ctx.services.admin as AdminGuard;
