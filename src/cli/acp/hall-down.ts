/** What `raider acp` says, in the terminal and over --stdio alike, when the hall of its directory does not answer. */
export function hallNotRunning(root: string, socketPath: string): string {
  return `the hall in ${root} is not running (no ACP socket at ${socketPath}); start it with: raider hall start ${root}`;
}
