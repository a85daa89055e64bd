/**
 * Whether the hall refuses a raider entry before running it (a `provider:`
 * on an entry, README "Configuration"). The hall runs unattended, so it only
 * ever uses provider aliases that somebody stored and accepted.
 */

import { PROVIDER_ALIAS } from './names.js';

export type RefusalReason =
  | 'provider_not_alias'
  | 'provider_with_engine'
  | 'provider_not_stored'
  | 'provider_config'
  // A worktree raider's run (docs/worktrees.md): no repository, no commit to start from, the disk cap.
  | 'not_a_git_repo'
  | 'no_base'
  | 'worktree_disk';

export interface Refusal {
  reason: RefusalReason;
  error: string;
}

export interface ProviderEntryFields {
  engine?: string;
  provider?: string;
}

/** What the provider store (`~/.raider/config.yml`) says, read when a run is about to start. */
export type ProviderStoreView = { ok: true; aliases: ReadonlySet<string> } | { ok: false; error: string };

/** A host, HOST:PORT or URL is not an alias. */
export function isProviderAlias(provider: string): boolean {
  return PROVIDER_ALIAS.test(provider);
}

export function refusalOf(name: string, entry: ProviderEntryFields, store: () => ProviderStoreView): Refusal | null {
  const provider = entry.provider;
  if (provider === undefined || provider === '') return null;
  if (entry.engine !== undefined && entry.engine !== '') {
    return {
      reason: 'provider_with_engine',
      error: `raider ${name}: provider and engine exclude each other on one entry (provider ${provider}, engine ${entry.engine}); keep one of them`,
    };
  }
  if (!isProviderAlias(provider)) {
    return {
      reason: 'provider_not_alias',
      error: `raider ${name}: provider ${provider} is a host or URL, not a provider alias; store it with 'raider provider add ALIAS ${provider}' and name the alias`,
    };
  }
  const view = store();
  if (!view.ok) {
    return { reason: 'provider_config', error: `raider ${name}: cannot read the provider store: ${view.error}` };
  }
  if (!view.aliases.has(provider)) {
    return {
      reason: 'provider_not_stored',
      error: `raider ${name}: provider alias ${provider} is not stored in ~/.raider/config.yml; add it with 'raider provider add ${provider} URL'`,
    };
  }
  return null;
}
