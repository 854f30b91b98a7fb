import type { Module } from '../core/module.js';
import { conversationsAdminRoutes } from './admin-routes.js';
import { conversationsRoutes } from './routes.js';
import { conversationLink } from './service.js';
import { conversationsMigrations } from './tables.js';

/** The Conversations API, and the conversations `conversation` on `/v1/responses` reads and appends to. */
export const conversationsModule: Module = {
  name: 'conversations',
  migrations: conversationsMigrations,
  provide(ctx) {
    ctx.services.conversations = conversationLink;
  },
  adminRoutes: conversationsAdminRoutes,
  routes: (app, ctx) => conversationsRoutes(app, ctx),
};
