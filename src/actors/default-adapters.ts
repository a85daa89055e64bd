/** The optional faces a `raider hall start` runs; each one decides from the config whether it is needed. */
import { acpAdapter } from '../adapters/acp/acp-adapter.js';
import { cronAdapter } from '../adapters/cron/cron-adapter.js';
import { mcpAdapter } from '../adapters/mcp/mcp-adapter.js';
import { telegramAdapter } from '../adapters/telegram/telegram-adapter.js';
import type { HallAdapterFactory } from './hall-adapter.js';

export const defaultAdapters: readonly HallAdapterFactory[] = [acpAdapter, cronAdapter(), telegramAdapter(), mcpAdapter];
