import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RAIDER_BIN, runCli, tempRoot } from '../support/hall-client.js';

describe('raider hall install', () => {
  it('--stdout prints a user unit that starts the hall of DIR and restarts it on failure', async () => {
    const dir = tempRoot('hall dir ');
    const res = await runCli(['hall', 'install', dir, '--stdout', '--acp-port', '38421']);
    expect(res.code).toBe(0);
    // The unit as it stands in the file.
    expect(res.stdout).toBe(`[Unit]
Description=Raider Hall daemon
After=network.target

[Service]
Type=simple
WorkingDirectory="${dir}"
ExecStart=${process.execPath} ${RAIDER_BIN} hall start "${dir}" --quiet --acp-port 38421
KillMode=mixed
TimeoutStopSec=15
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`);
  });

  it('writes $XDG_CONFIG_HOME/systemd/user/NAME.service and says what to run', async () => {
    const dir = tempRoot();
    const config = tempRoot('xdg-');
    const res = await runCli(['hall', 'install', dir, '--name', 'my-hall'], { env: { XDG_CONFIG_HOME: config } });
    const file = path.join(config, 'systemd', 'user', 'my-hall.service');
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`Installed ${file}\nRun:\n  systemctl --user daemon-reload\n  systemctl --user enable --now my-hall\n`);
    expect(fs.readFileSync(file, 'utf8')).toContain(`WorkingDirectory=${dir}\n`);
  });

  it('refuses a DIR that is not a directory', async () => {
    const res = await runCli(['hall', 'install', '/no/such/dir', '--stdout']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Not a directory: /no/such/dir');
  });

  it('refuses a --name that is not a plain name (exit 2), writing nothing', async () => {
    const dir = tempRoot();
    const config = tempRoot('xdg-');
    for (const name of ['../../evil', 'a/b', '.hidden', '']) {
      const res = await runCli(['hall', 'install', dir, '--name', name], { env: { XDG_CONFIG_HOME: config } });
      expect(res.code, name).toBe(2);
      expect(res.stdout, name).toBe('');
      expect(res.stderr, name).toContain('invalid unit name');
    }
    expect(fs.readdirSync(config)).toEqual([]);
  });
});
