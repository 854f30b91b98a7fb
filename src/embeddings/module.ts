import type { Module } from '../core/module.js';
import { embeddingsRoutes } from './routes.js';

/** Embeddings (`POST /v1/embeddings`) with the vector stores' embedders; stateless, so no tables. */
export const embeddingsModule: Module = {
  name: 'embeddings',
  routes: (app, ctx) => embeddingsRoutes(app, ctx),
};
