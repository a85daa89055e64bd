/**
 * Where the permission mode and rules come from (permission_mode):
 *   - `<root>/.raider/config.yml`:
 *       permissions:
 *         default_mode: acceptEdits
 *         allow: ["Bash(npm run *)", "Edit(src/**)"]
 *         deny:  ["Read(.env)"]
 *         ask:   ["Bash(git push *)"]
 *   - the project's Claude settings, `.claude/settings.json` and
 *     `.claude/settings.local.json` (`permissions.defaultMode`, `allow`,
 *     `deny`, `ask`).
 * Rules of all files add up. The mode: `--permission-mode`, else
 * `.raider/config.yml`, else settings.local.json, else settings.json, else
 * `default`. Our own file is checked strictly (exit 3 naming file and
 * key); a Claude mode we do not know is skipped with a warning, since that
 * file is written for another program.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { PERMISSION_MODES, type PermissionMode } from '../../domain/permission.js';
import { checkConfig, readConfigDocument } from '../config/yaml-file.js';
import type { RuleSet } from './policy.js';
import { parseRule, type Rule } from './rules.js';

export interface PermissionSettings extends RuleSet {
  mode: PermissionMode;
  /** Where the mode came from, for messages. */
  modeSource: string;
  warnings: string[];
}

const ruleList = z.array(z.string().min(1)).optional();

const raiderSchema = z.looseObject({
  permissions: z
    .strictObject({
      default_mode: z.enum(PERMISSION_MODES).optional(),
      allow: ruleList,
      deny: ruleList,
      ask: ruleList,
    })
    .nullish(),
});

const claudeSchema = z.looseObject({
  permissions: z
    .looseObject({
      defaultMode: z.string().optional(),
      allow: ruleList,
      deny: ruleList,
      ask: ruleList,
    })
    .nullish(),
});

export function raiderConfigPath(root: string): string {
  return join(root, '.raider', 'config.yml');
}

export function loadPermissionSettings(root: string, flagMode: PermissionMode | undefined): PermissionSettings {
  const out: PermissionSettings = { mode: 'default', modeSource: 'the built-in default', allow: [], deny: [], ask: [], warnings: [] };
  const modes: Array<{ mode: PermissionMode; source: string }> = [];
  const add = (source: string, p: { allow?: string[] | undefined; deny?: string[] | undefined; ask?: string[] | undefined }): void => {
    (out.allow as Rule[]).push(...(p.allow ?? []).map((t) => parseRule(t, source)));
    (out.deny as Rule[]).push(...(p.deny ?? []).map((t) => parseRule(t, source)));
    (out.ask as Rule[]).push(...(p.ask ?? []).map((t) => parseRule(t, source)));
  };

  const raiderFile = raiderConfigPath(root);
  const raider = checkConfig(raiderFile, raiderSchema, readConfigDocument(raiderFile) ?? {}).permissions;
  if (raider) {
    add(raiderFile, raider);
    if (raider.default_mode) modes.push({ mode: raider.default_mode, source: `${raiderFile} permissions.default_mode` });
  }
  for (const name of ['settings.local.json', 'settings.json']) {
    const file = join(root, '.claude', name);
    const claude = checkConfig(file, claudeSchema, readConfigDocument(file, 'json') ?? {}).permissions;
    if (!claude) continue;
    add(file, claude);
    if (claude.defaultMode !== undefined) {
      const mode = PERMISSION_MODES.find((m) => m === claude.defaultMode);
      if (mode) modes.push({ mode, source: `${file} permissions.defaultMode` });
      else out.warnings.push(`${file}: permissions.defaultMode '${claude.defaultMode}' is not a mode this raider knows; ignored`);
    }
  }
  if (flagMode !== undefined) {
    out.mode = flagMode;
    out.modeSource = '--permission-mode';
  } else if (modes[0]) {
    out.mode = modes[0].mode;
    out.modeSource = modes[0].source;
  }
  return out;
}
