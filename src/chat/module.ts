import type { Module } from '../core/module.js';
import { chatRoutes } from './routes.js';

/** Chat completions (`POST /v1/chat/completions`) on `ctx.services.models`; stateless, so no tables. */
export const chatModule: Module = {
  name: 'chat',
  routes: (app, ctx) => chatRoutes(app, ctx),
};
