/** `raider hall install`: a systemd user unit that runs the hall of DIR and restarts it on failure. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface UnitOptions {
  dir: string;
  acpPort?: number;
  acpHost?: string;
  /** The Node binary and the raider script the unit runs. */
  node?: string;
  raider?: string;
}

function word(w: string): string {
  return /\s/.test(w) ? `"${w.replace(/"/g, '\\"')}"` : w;
}

export function unitText(options: UnitOptions): string {
  const node = options.node ?? process.execPath;
  const raider = options.raider ?? fileURLToPath(new URL('../../../bin/raider', import.meta.url));
  const exec = [node, raider, 'hall', 'start', options.dir, '--quiet'];
  if (options.acpPort !== undefined) {
    exec.push('--acp-port', String(options.acpPort));
    if (options.acpHost !== undefined) exec.push('--acp-host', options.acpHost);
  }
  return [
    '[Unit]',
    'Description=Raider Hall daemon',
    'After=network.target',
    '',
    '[Service]',
    'Type=simple',
    `WorkingDirectory=${word(options.dir)}`,
    `ExecStart=${exec.map(word).join(' ')}`,
    // The hall stops its raiders within 5 s of SIGTERM; give it room before systemd's SIGKILL.
    'KillMode=mixed',
    'TimeoutStopSec=15',
    'Restart=on-failure',
    'RestartSec=5',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

export function unitPath(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(config, 'systemd', 'user', `${name}.service`);
}

export function installUnit(name: string, text: string, env: NodeJS.ProcessEnv = process.env): string {
  const file = unitPath(name, env);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}
