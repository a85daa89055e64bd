/**
 * `.raider-hall/dashboard.json` (mode 0600): where the running hall's
 * dashboard listens and its login token, made anew at each start. The hall
 * writes it; `raider hall dashboard` reads it. Kept apart from the server so
 * the CLI loads nothing else.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../../domain/error-message.js';

export const dashboardFileSchema = z.object({ url: z.string(), token: z.string(), pid: z.number() });
export type DashboardFile = z.infer<typeof dashboardFileSchema>;

export function dashboardFilePath(root: string): string {
  return path.join(root, '.raider-hall', 'dashboard.json');
}

export function writeDashboardFile(root: string, content: DashboardFile): void {
  const file = dashboardFilePath(root);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // A mode is applied only when a file is created: a previous hall's file goes first.
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, `${JSON.stringify(content)}\n`, { mode: 0o600, flag: 'wx' });
}

/** The file's content, or an error that says what is wrong with it. */
export function readDashboardFile(root: string): DashboardFile | { error: string } {
  const file = dashboardFilePath(root);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { error: `cannot read ${file}: ${errorMessage(err)}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { error: `${file} is not JSON: restart the hall to write it again` };
  }
  const result = dashboardFileSchema.safeParse(parsed);
  return result.success ? result.data : { error: `${file} is not a dashboard file: restart the hall to write it again` };
}

export function removeDashboardFile(root: string, pid: number): void {
  const current = readDashboardFile(root);
  if (!('error' in current) && current.pid === pid) fs.rmSync(dashboardFilePath(root), { force: true });
}
