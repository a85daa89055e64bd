import { describe, expect, it } from 'vitest';
import { mermaidChart } from '../../src/cli/statechart.js';
import { runMachine } from '../../src/machines/run.machine.js';
import { slotMachine } from '../../src/machines/slot.machine.js';

describe('statecharts generated from the machine definitions', () => {
  it('the run machine shows its states and the cancel escalation', () => {
    const chart = mermaidChart(runMachine);
    expect(chart.startsWith('stateDiagram-v2\n')).toBe(true);
    for (const state of ['queued', 'spawning', 'running', 'cancelling', 'terminating', 'killing', 'reaping', 'done', 'refused']) {
      expect(chart).toContain(`"${state}"`);
    }
    expect(chart).toContain('run_alive_running --> run_alive_cancelling: run.cancel');
    expect(chart).toContain('run_alive_cancelling --> run_alive_terminating: after cancelGrace [escalates]');
    expect(chart).toContain('run_alive_terminating --> run_alive_killing: after cancelGrace [escalates]');
    expect(chart).toContain('run_queued --> run_refused: done: prepareRun [isRefusal]');
    expect(chart).toContain('run_done --> [*]');
  });

  it('the slot machine shows the FIFO drain loop', () => {
    const chart = mermaidChart(slotMachine);
    expect(chart).toContain('slot_busy --> slot_draining');
    expect(chart).toContain('slot_draining --> slot_offering: always');
    expect(chart).toContain('slot_offering --> slot_busy: slot.offerAccepted [isOfferedHead]');
  });
});
