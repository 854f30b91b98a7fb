// The app host API's request and reply types, for the host page (web/apps): type-only, taken from the route
// schemas so the page and the server cannot drift. web/ imports nothing else from src/.
import type { Static } from 'typebox';
import type * as S from './schemas.js';

export type ConnectBody = Static<typeof S.ConnectBody>;
export type CallBody = Static<typeof S.CallBody>;
export type RenderBody = Static<typeof S.RenderBody>;
export type PrefetchBody = Static<typeof S.PrefetchBody>;
export type ResourceBody = Static<typeof S.ResourceBody>;
export type Finding = Static<typeof S.Finding>;
export type ConnectionReply = Static<typeof S.ConnectionReply>;
export type ToolEntry = ConnectionReply['tools'][number];
export type CallReply = Static<typeof S.CallReply>;
export type PrefetchReply = Static<typeof S.PrefetchReply>;
export type RenderReply = Static<typeof S.RenderReply>;
export type ResourceReply = Static<typeof S.ResourceReply>;
export type UploadReply = Static<typeof S.UploadReply>;
export type LibraryReply = Static<typeof S.LibraryReply>;
export type LibraryFile = LibraryReply['data'][number];
export type DownloadUrlReply = Static<typeof S.DownloadUrlReply>;
