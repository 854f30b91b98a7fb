import { useEffect } from 'preact/hooks';
import { get } from '../api.js';
import type { List, Organization, Project as ProjectRow } from '../../../src/dashboard/wire.js';
import { html, useData } from '../ui.js';

interface Project {
  id: string;
  name: string;
  org: string;
}

/** Every project of every organization, for pages scoped to one project. */
export async function allProjects(): Promise<Project[]> {
  const orgs = await get<List<Organization>>('organizations');
  const lists = await Promise.all(
    orgs.data.map(async (o) => (await get<List<ProjectRow>>(`organizations/${o.id}/projects`)).data.map((p) => ({ ...p, org: o.name }))),
  );
  return lists.flat();
}

/** A labelled select of the projects; picks the first when none is chosen. */
export function ProjectPicker({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  const projects = useData(allProjects, []);
  useEffect(() => {
    if (!value && projects.data?.length) onChange(projects.data[0].id);
  }, [projects.data, value]);
  return html`<label class="picker"
    >Project
    <select value=${value} onChange=${(e: Event) => onChange((e.target as HTMLSelectElement).value)}>
      ${projects.data?.map((p) => html`<option value=${p.id}>${p.org} / ${p.name} (${p.id})</option>`)}
    </select>
  </label>`;
}
