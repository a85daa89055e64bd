/**
 * The adapter port moved to src/ports/hall-services.ts; this re-export keeps
 * the MCP hall-tool handlers building until the one typed hall client
 * replaces them (it is allowed by name in test/architecture.test.ts).
 */
export type { HallAdapter, HallAdapterFactory, HallServices } from '../ports/hall-services.js';
