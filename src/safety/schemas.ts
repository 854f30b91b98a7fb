import { Type } from 'typebox';

/** Replies of the safety endpoints (service.ts: SafetyCase, SafetyAlert). */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });

export const SafetyCaseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('safety.case'),
  action: Type.Union([Type.Literal('warning'), Type.Literal('deactivation')]),
  organization_id: Type.String(),
  project_id: Type.String(),
  safety_identifier: Type.String(),
  category: Type.String(),
  description: Type.String(),
  status: Type.Literal('open'),
  created_at: Type.Integer(),
  effective_at: Type.Union([Type.Integer(), Type.Null()]),
});

export const SafetyAlertObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('safety.alert'),
  scope: Type.Union([Type.Literal('project'), Type.Literal('organization')]),
  organization_id: Type.String(),
  project_id: Type.Union([Type.String(), Type.Null()]),
  category: Type.String(),
  severity: Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]),
  summary: Type.String(),
  status: Type.Literal('approved'),
  created_at: Type.Integer(),
});
