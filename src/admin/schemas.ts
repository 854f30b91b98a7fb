import { Type } from 'typebox';

/** The control plane's views of the clock and the request log (the routes' response schemas; src/dashboard/wire.ts types them for the dashboard). */
export const ClockView = Type.Object({
  object: Type.Literal('clock'),
  now: Type.Integer(),
  now_ms: Type.Integer(),
  offset_ms: Type.Integer(),
});
const Nullable = (s: ReturnType<typeof Type.String>) => Type.Union([s, Type.Null()]);
const LoggedRequestFields = {
  id: Type.String(),
  method: Type.String(),
  path: Type.String(),
  status: Type.Integer(),
  duration_ms: Type.Number(),
  at: Type.Integer(),
  credential_id: Nullable(Type.String()),
  project_id: Nullable(Type.String()),
  model: Nullable(Type.String()),
  route: Nullable(
    Type.String({ description: "the answering route's path template, e.g. /v1/threads/{thread_id}/runs; null when none matched" }),
  ),
};
export const LoggedRequest = Type.Object(LoggedRequestFields);
export const RequestList = Type.Object({ object: Type.Literal('list'), data: Type.Array(LoggedRequest) });
const Exchange = Type.Object({
  headers: Type.Record(Type.String(), Type.String()),
  body: Type.Unknown({ description: 'JSON (or text) with secrets redacted; null when absent or larger than 8 KiB' }),
});
export const LoggedRequestDetail = Type.Object({ ...LoggedRequestFields, request: Exchange, response: Exchange });
