import { describe, expect, it } from 'vitest';
import { modules } from '../../server/modules.js';
import { startTestStandin } from '../../../test/helpers.js';

/** The refusal of rule 6 must stand in front of every closed endpoint, whatever the module list says. */
describe('endpoints closed to workload tokens', () => {
  it('a Standin whose closed endpoint is registered before the workload module does not start', async () => {
    const workload = modules.find((m) => m.name === 'workload_identity')!;
    const reordered = [...modules.filter((m) => m !== workload), workload];
    await expect(startTestStandin({ modules: reordered, seed: false })).rejects.toThrow(/registered before the workload identity module/);
  });
});
