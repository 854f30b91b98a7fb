// The box a component's frame is shown in: its chrome (navigation, open in app, exit) and the scroll area that
// holds the frame element made by frame.ts. Preact renders the box; the frame element is only attached, never
// re-created, so the component keeps running across renders.
import { html } from 'htm/preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { useCell } from './cell.js';
import type { Widget } from './widget.js';

export function FrameBox({ w }: { w: Widget }) {
  const v = useCell(w.view);
  const scroll = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = w.frame?.element;
    if (el && scroll.current && el.parentElement !== scroll.current) scroll.current.append(el);
  });
  if (v.gone) return null;
  const back = () => w.toBridge({ jsonrpc: '2.0', method: 'bridge/navigate', params: { action: 'back' } });
  return html`<div
    class=${`frame-box mode-${v.mode} ${v.bordered ? 'bordered' : 'borderless'}`}
    data-mode=${v.mode}
    data-path=${v.path ?? undefined}
    data-open-in-app=${v.openInApp ?? undefined}
    data-last-external=${v.lastExternal ?? undefined}
    data-scrolls=${v.scrolls === null ? undefined : String(v.scrolls)}
  >
    <div class="frame-chrome">
      <span class="nav"
        ><button type="button" class="nav-back" disabled=${!v.canGoBack} onClick=${back}>← Back</button>${' '}<code class="nav-path"
          >${v.path ?? '/'}</code
        ></span
      >
      <a class="open-in-app" target="_blank" rel="noopener" href=${v.openInApp ?? (v.href || undefined)}>Open in app</a>
      <button type="button" class="exit-mode" onClick=${() => w.setDisplayMode('inline', 'host')}>Exit</button>
    </div>
    <div class="frame-scroll" ref=${scroll} style=${v.cap === null ? undefined : { maxHeight: `${v.cap}px` }}></div>
  </div>`;
}
