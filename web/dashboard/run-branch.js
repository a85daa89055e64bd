// A worktree run's branch on its page (docs/worktrees.md): what raider.done
// said of it, and the branch against its base as the hall's git counts it now.
import { h } from 'preact';
import htm from 'htm';

const html = htm.bind(h);

function count(n) {
  return n === null || n === undefined ? 'binary' : String(n);
}

function commitsText(branch) {
  if (branch.commits === undefined) return null;
  const own = `${branch.commits} by the raider`;
  return branch.wip_commit === true ? `${own}, and one work-in-progress commit by the hall` : own;
}

function worktreeText(branch) {
  if (branch.worktree === undefined) return null;
  return branch.worktree_kept === true ? `${branch.worktree} (kept)` : `${branch.worktree} (removed once the run ended)`;
}

export function RunBranch({ id, branch }) {
  if (branch === undefined) return null;
  const name = branch.diff?.branch ?? branch.branch ?? `raider/${id}`;
  const base = branch.diff?.base ?? branch.base;
  const commits = commitsText(branch);
  const worktree = worktreeText(branch);
  const diff = branch.diff;
  return html`<section aria-label="Branch"><h3>Branch</h3>
    <dl>
      <dt>Branch</dt><dd><code>${name}</code>${diff === null ? ' (gone: the run changed nothing, or it was removed)' : null}</dd>
      ${base !== undefined ? html`<dt>Base</dt><dd><code title=${base}>${base.slice(0, 12)}</code></dd>` : null}
      ${commits !== null ? html`<dt>Commits</dt><dd>${commits}</dd>` : null}
      ${worktree !== null ? html`<dt>Worktree</dt><dd>${worktree}</dd>` : null}
    </dl>
    ${
      diff !== null && diff.files.length > 0
        ? html`<table aria-label="Changed files">
            <thead><tr><th>File</th><th>Added</th><th>Removed</th></tr></thead>
            <tbody>${diff.files.map((f) => html`<tr><td><code>${f.file}</code></td><td>+${count(f.added)}</td><td>−${count(f.removed)}</td></tr>`)}</tbody>
          </table>
          <p class="diffstat">${diff.summary}</p>
          <p>Review and merge it in your checkout: <code>git diff ${base?.slice(0, 12)}...${name}</code>, then <code>git merge --squash ${name}</code>.</p>`
        : diff !== null
          ? html`<p>No file changed against the base.</p>`
          : null
    }
  </section>`;
}
