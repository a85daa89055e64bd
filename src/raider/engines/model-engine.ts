/**
 * Builds an AI SDK engine from a resolved configuration. Kept apart from
 * select.ts and loaded on demand: the SDK packages take a second or more to
 * load, which a scripted run, `--help` or a configuration error should not
 * pay for.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AiSdkEngine, type ModelSettings } from './ai-sdk.js';
import type { Engine } from './engine.js';

export interface ModelEngineConfig {
  engine: 'anthropic' | 'openai';
  model: string;
  url: string;
  apiKey: string | undefined;
  settings: ModelSettings;
}

export function buildModelEngine(c: ModelEngineConfig): Engine {
  const languageModel =
    c.engine === 'anthropic'
      ? // An explicit key (even an empty one) stops the SDK from reading ANTHROPIC_API_KEY itself.
        createAnthropic({ baseURL: c.url, apiKey: c.apiKey ?? '' })(c.model)
      : createOpenAICompatible({ name: 'openai', baseURL: c.url, ...(c.apiKey ? { apiKey: c.apiKey } : {}) }).chatModel(c.model);
  return new AiSdkEngine(c.engine, c.model, languageModel, c.settings, c.url);
}
