import { Type } from 'typebox';
import { AnyObject } from '../../core/schemas.js';

/** Request and reply shapes of the app host's API (`/apps/api/…`), as the host page uses them. */

const Meta = Type.Record(Type.String(), Type.Unknown());
const Strings = Type.Array(Type.String());
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ConnectBody = Type.Object(
  {
    server: Type.String({ minLength: 1, maxLength: 4000 }),
    refresh: Type.Optional(Type.Boolean()),
    locale: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const CallBody = Type.Object(
  {
    connection: Type.String(),
    name: Type.String({ minLength: 1 }),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    _meta: Type.Optional(Meta),
    caller: Type.Union([Type.Literal('model'), Type.Literal('app')]),
  },
  { additionalProperties: false },
);

export const RenderBody = Type.Object(
  {
    connection: Type.String(),
    tool: Type.Optional(Type.String()),
    uri: Type.Optional(Type.String({ maxLength: 2000 })),
    globals: Type.Record(Type.String(), Type.Unknown()),
    widgetSessionId: Type.String({ minLength: 1, maxLength: 200 }),
    cspProfile: Type.Optional(Type.Union([Type.Literal('strict'), Type.Literal('lenient')])),
  },
  { additionalProperties: false },
);

export const PrefetchBody = Type.Object(
  { connection: Type.String(), tool: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const ResourceBody = Type.Object(
  { connection: Type.String(), uri: Type.String({ minLength: 1, maxLength: 2000 }) },
  { additionalProperties: false },
);

export const AssetParams = Type.Object({ file: Type.String({ pattern: '^[a-z0-9-]+\\.(js|css|map)$' }) });

export const FileIdParams = Type.Object({ id: Type.String() });

export const DownloadQuery = Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) });

/** One lint finding: the rule, where (a JSON path into `{tools, resources, samples}`) and what to do. */
export const Finding = Type.Object({
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
  rule: Type.String(),
  path: Type.String(),
  message: Type.String(),
});

/** A connection: the server's tools (each with who may call it and its template) and the lint findings. */
export const ConnectionReply = Type.Object({
  id: Type.String(),
  server: Type.String(),
  serverInfo: Type.Optional(AnyObject),
  tools: Type.Array(
    Type.Object({
      descriptor: AnyObject,
      visibility: Type.Object({ model: Type.Boolean(), app: Type.Boolean() }),
      templateUri: NullableString,
    }),
  ),
  findings: Type.Array(Finding),
});

/** A tool result exactly as the server sent it. */
export const CallReply = Type.Object({ result: AnyObject });

export const PrefetchReply = Type.Object({ uri: Type.String(), origin: Type.String() });

export const RenderReply = Type.Object({
  url: Type.String(),
  sandboxUrl: Type.String(),
  html: Type.String(),
  cspProfile: Type.Union([Type.Literal('strict'), Type.Literal('lenient')]),
  cspReportOnly: Type.String(),
  origin: Type.String(),
  uri: Type.String(),
  mimeType: Type.String(),
  csp: Type.Object({
    connectDomains: Strings,
    resourceDomains: Strings,
    frameDomains: Strings,
    baseUriDomains: Strings,
    redirectDomains: Strings,
  }),
  cspHeader: Type.String(),
  prefersBorder: Type.Union([Type.Boolean(), Type.Null()]),
  description: NullableString,
  domain: NullableString,
  allow: Type.String(),
  permissions: Type.Record(Type.String(), AnyObject),
});

/** A `resources/read` result as the server sent it. */
export const ResourceReply = Type.Object({ contents: Type.Array(AnyObject) });

export const UploadReply = Type.Object({
  fileId: Type.String(),
  fileName: Type.String(),
  mimeType: Type.String(),
  size: Type.Integer(),
  library: Type.Boolean(),
});

export const LibraryReply = Type.Object({
  data: Type.Array(Type.Object({ fileId: Type.String(), fileName: Type.String(), mimeType: Type.String(), size: Type.Integer() })),
});

export const DownloadUrlReply = Type.Object({
  downloadUrl: Type.String(),
  fileId: Type.String(),
  fileName: Type.String(),
  mimeType: Type.String(),
});

/** HTML, a script, a style sheet or a file's bytes: sent as they are (the serializer never sees them). */
export const Document = Type.Unsafe<string | Uint8Array>({ type: 'string', format: 'binary' });
