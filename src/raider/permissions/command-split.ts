/**
 * Splits a shell command line into the simple commands a Bash rule is
 * matched against: `git add . && git commit -m "x; y"` is `git add .` and
 * `git commit -m "x; y"`. Quotes are respected. A command that substitutes
 * (`$(...)`, backticks, `<(...)`) or redirects into a file is marked, so a
 * wildcard rule such as `Bash(echo *)` cannot be stretched to allow
 * `echo $(rm -rf x)` or `echo x > src/main.ts`. Harmless redirections
 * (`2>&1`, `>/dev/null`) stay allowed.
 */

export interface CommandSegment {
  text: string;
  /** Substitutes a command or redirects into a file: only an exact rule can allow it. */
  opaque: boolean;
}

export interface SplitCommand {
  segments: CommandSegment[];
  /** Anything in the line substitutes a command. */
  substitutes: boolean;
}

const HARMLESS_REDIRECT = /^(?:>&\d|>&-|>\s*\/dev\/null(?![\w/.-]))/;

export function splitCommand(line: string): SplitCommand {
  const segments: CommandSegment[] = [];
  let current = '';
  let opaque = false;
  let substitutes = false;
  let quote: "'" | '"' | undefined;

  const push = (): void => {
    const text = current.trim();
    if (text) segments.push({ text, opaque });
    current = '';
    opaque = false;
  };

  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    const rest = line.slice(i);
    if (quote === "'") {
      current += c;
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === '\\') {
      current += rest.slice(0, 2);
      i++;
      continue;
    }
    if (c === '`' || rest.startsWith('$(')) {
      opaque = substitutes = true;
      current += c;
      continue;
    }
    if (quote === '"') {
      current += c;
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
      continue;
    }
    if (rest.startsWith('<(') || rest.startsWith('>(')) {
      opaque = substitutes = true;
      current += c;
      continue;
    }
    if (c === '>' || c === '<') {
      const harmless = c === '>' && HARMLESS_REDIRECT.exec(rest);
      if (harmless) {
        current += harmless[0];
        i += harmless[0].length - 1;
      } else {
        opaque = true;
        current += c;
      }
      continue;
    }
    if (rest.startsWith('&>')) {
      const harmless = HARMLESS_REDIRECT.exec(rest.slice(1));
      if (harmless) {
        current += `&${harmless[0]}`;
        i += harmless[0].length;
      } else {
        opaque = true;
        current += c;
      }
      continue;
    }
    if (rest.startsWith('&&') || rest.startsWith('||')) {
      push();
      i++;
      continue;
    }
    if (c === ';' || c === '|' || c === '&' || c === '\n') {
      push();
      continue;
    }
    current += c;
  }
  push();
  return { segments, substitutes };
}
