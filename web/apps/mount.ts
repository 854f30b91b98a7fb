// Makes components: a Widget wired to both protocols' handlers and able to open modals.
import { rid } from './json.js';
import { handleMcp } from './mcp-apps.js';
import { addModal, removeModal } from './modals.js';
import { handleBridge } from './vendor-bridge.js';
import { Widget, type WidgetHandlers, type WidgetOptions } from './widget.js';

const handlers: WidgetHandlers = { bridge: handleBridge, mcp: handleMcp, openModal };

/** A component for a turn or a modal (not yet mounted). */
export function createWidget(o: Omit<WidgetOptions, 'handlers'>): Widget {
  return new Widget({ ...o, handlers });
}

/** Opens a modal with another template of the same server (or the component's own), with the given params. */
async function openModal(parent: Widget, template: string | null, params: unknown) {
  const id = rid('modal');
  const modal = createWidget({
    turn: parent.o.turn,
    entry: parent.o.entry,
    tool: parent.o.tool,
    uri: template ?? parent.o.uri ?? parent.o.entry.templateUri,
    view: { mode: 'modal', params },
    toolInput: parent.globals.toolInput,
    result: parent.result,
    onClose: () => removeModal(id),
  });
  await modal.mount();
  addModal(id, modal);
}
