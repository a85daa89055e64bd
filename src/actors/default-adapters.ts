/**
 * The optional faces a `raider hall start` runs; each one decides from the
 * config whether it is needed. Telegram, MCP, cron and the dashboard are loaded only when
 * the config has them: telegraf and the MCP SDK alone add some 30 MB to the
 * hall's memory, and every run's fork copies the page tables of all of it.
 */
import { acpAdapter } from '../adapters/acp/acp-adapter.js';
import { socketQuestionsAdapter } from '../adapters/control/socket-questions.js';
import type { HallAdapterFactory } from '../ports/hall-services.js';

const cronWhenConfigured: HallAdapterFactory = async (services) =>
  services.config.cron.length === 0 ? null : (await import('../adapters/cron/cron-adapter.js')).cronAdapter()(services);

const telegramWhenConfigured: HallAdapterFactory = async (services) =>
  services.config.telegram === null ? null : (await import('../adapters/telegram/telegram-adapter.js')).telegramAdapter()(services);

const mcpWhenConfigured: HallAdapterFactory = async (services) =>
  services.config.mcp.enable ? (await import('../adapters/mcp/mcp-adapter.js')).mcpAdapter(services) : null;

const dashboardWhenConfigured: HallAdapterFactory = async (services) =>
  services.config.dashboard ? (await import('../adapters/dashboard/dashboard-adapter.js')).dashboardAdapter(services) : null;

export const defaultAdapters: readonly HallAdapterFactory[] = [
  acpAdapter,
  cronWhenConfigured,
  telegramWhenConfigured,
  mcpWhenConfigured,
  dashboardWhenConfigured,
  socketQuestionsAdapter,
];
