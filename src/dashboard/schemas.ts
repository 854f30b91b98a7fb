import { Type } from 'typebox';

export const Document = Type.String({ description: 'An HTML page.' });
export const AssetParams = Type.Object({ name: Type.String({ pattern: '^[a-z]+\\.(js|css|js\\.map)$', maxLength: 40 }) });
export const SignInQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 300 })) }, { additionalProperties: false });
export const SessionBody = Type.Object({ admin_key: Type.String({ minLength: 1, maxLength: 300 }) }, { additionalProperties: false });
export const SessionView = Type.Object({
  object: Type.Literal('dashboard.session'),
  signed_in: Type.Boolean(),
  expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds (real time), null once signed out.' }),
  binding_token: Type.Optional(
    Type.String({ description: 'Signing in only: the value the page sends in x-standin-dashboard with every request.' }),
  ),
});
export const SignInLink = Type.Object({
  object: Type.Literal('dashboard.sign_in_link'),
  url: Type.String({ description: 'Opens the dashboard signed in; works once.' }),
  expires_at: Type.Integer({ description: 'Unix seconds (real time).' }),
});
export const OldWebhooksParams = Type.Object({ project_id: Type.String({ maxLength: 200 }) });
export const LookupQuery = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 200, description: 'Any id Standin issues: req_…, evt_…, run_…, file-…' }) },
  { additionalProperties: false },
);
export const LookupView = Type.Object({
  object: Type.Literal('dashboard.lookup'),
  id: Type.String(),
  kind: Type.String({ description: 'What the id names: request, event, webhook_delivery, run, thread, file …' }),
  project_id: Type.Union([Type.String(), Type.Null()], { description: 'The project it belongs to, when it belongs to one.' }),
  url: Type.String({ description: 'The dashboard page that shows it (a path under /dashboard).' }),
});
