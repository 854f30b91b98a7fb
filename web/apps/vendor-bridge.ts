// The `window.<vendor>` bridge (spec/app-bridge.md): the requests and notifications bridge.ts sends over its
// MessagePort, answered whether or not an approval is pending.
import { downloadUrl, uploadBlob } from './api.js';
import { approvalPending } from './approvals.js';
import { callFromComponent, isWebUrl, openLink, originMatches } from './calls.js';
import { obj, str, type JsonObject, type RpcMessage } from './json.js';
import { pickFiles } from './picker.js';
import { addTranscript } from './transcript.js';
import type { Widget } from './widget.js';

/** The structured widget state form shows the model only modelContent and imageIds. */
function modelStateView(state: unknown) {
  const s = obj(state);
  if ('modelContent' in s || 'privateContent' in s) return { modelContent: s.modelContent ?? null, imageIds: s.imageIds ?? [] };
  return state;
}

/** Handles one message of the component's bridge. */
export async function handleBridge(w: Widget, m: RpcMessage) {
  const p = obj(m.params);
  const bytes = p.bytes instanceof ArrayBuffer ? p.bytes : null;
  w.log.push({ via: 'bridge', method: m.method, params: bytes ? { ...p, bytes: `[${bytes.byteLength} bytes]` } : m.params });
  const reply = (result: unknown) => m.id !== undefined && w.toBridge({ jsonrpc: '2.0', id: m.id, result });
  const fail = (code: number, message: string) => m.id !== undefined && w.toBridge({ jsonrpc: '2.0', id: m.id, error: { code, message } });
  try {
    switch (m.method) {
      case 'bridge/setWidgetState':
        w.setWidgetState(p.state);
        addTranscript('state', 'Widget state (the model sees it in later turns)', modelStateView(p.state));
        return;
      case 'bridge/intrinsicHeight':
        return w.reportHeight(Number(p.height) || null, true);
      case 'bridge/size':
        return w.reportHeight(Number(p.height) || null, false);
      case 'bridge/navigation':
        return w.patchView({ href: str(p.href) ?? '', path: str(p.path) ?? '/', canGoBack: p.canGoBack === true });
      case 'tools/call':
        return reply(await callFromComponent(w, String(p.name), obj(p.arguments)));
      case 'bridge/sendFollowUpMessage':
        if (typeof p.prompt !== 'string' || !p.prompt.trim()) return fail(-32602, 'prompt must be a non-blank string');
        addTranscript('followup', 'Follow-up message from the component', p.prompt, { scrollToBottom: p.scrollToBottom !== false });
        return reply({});
      case 'ui/request-display-mode':
        return reply({ mode: w.componentMode(p.mode) });
      case 'bridge/uploadFile': {
        const up = await uploadBlob(bytes ?? new ArrayBuffer(0), String(p.name), p.library === true, str(p.type));
        addTranscript('file', `File uploaded by the component: ${up.fileName}`, { fileId: up.fileId, mimeType: up.mimeType });
        return reply({ fileId: up.fileId });
      }
      case 'bridge/selectFiles':
        return reply(await pickFiles());
      case 'bridge/getFileDownloadUrl': {
        if (typeof p.fileId !== 'string') return fail(-32602, 'fileId must be a string');
        return reply({ downloadUrl: (await downloadUrl(p.fileId)).downloadUrl });
      }
      case 'bridge/requestModal':
        // Answered at once: a modal would cover the prompt the user has to answer, so it is declined meanwhile.
        if (approvalPending()) return fail(-32000, 'declined: the user has an approval to answer first');
        await w.o.handlers.openModal(w, str(p.template) ?? null, p.params ?? null);
        return reply({});
      case 'bridge/requestClose':
        reply({});
        return void w.close('the component asked to close');
      case 'bridge/openExternal':
        return reply(openExternal(w, p));
      case 'bridge/setOpenInAppUrl':
        if (!isWebUrl(p.href)) return fail(-32602, 'href must be an absolute http(s) URL');
        w.patchView({ openInApp: p.href });
        return reply({});
      default:
        return fail(-32601, `unknown bridge method ${m.method}`);
    }
  } catch (err) {
    fail(-32000, (err as Error).message);
  }
}

/** openExternal: redirectUrl is appended for the template's redirect domains, unless the component says false. */
function openExternal(w: Widget, p: JsonObject) {
  if (!isWebUrl(p.href)) throw new Error('href must be an absolute http(s) URL');
  const url = new URL(p.href);
  const approved = w.redirectDomains.some((d) => originMatches(url, d));
  if (approved && p.redirectUrl !== false)
    url.searchParams.set('redirectUrl', typeof p.redirectUrl === 'string' ? p.redirectUrl : location.href);
  openLink(w, url.toString());
  return {};
}
