// Display modes and frame sizes (MCP Apps: inline, pip, fullscreen; flexible heights).

export type DisplayMode = 'inline' | 'pip' | 'fullscreen';
export const MODES: DisplayMode[] = ['inline', 'pip', 'fullscreen'];
export const isMode = (m: unknown): m is DisplayMode => MODES.includes(m as DisplayMode);

/**
 * The tallest an inline frame is shown. The frame follows the height its component reports (MCP Apps
 * size-changed, or notifyIntrinsicHeight) up to this, and scrolls beyond it, so nothing is cut off.
 */
export const inlineCap = () => Math.max(600, innerHeight - 120);
/** A bound on a frame's height, so a component whose content grows with its frame cannot grow it forever. */
export const MAX_FRAME_HEIGHT = 10_000;

/** The maxHeight a component is told for a mode. */
export const maxHeightFor = (mode: DisplayMode) =>
  mode === 'fullscreen' ? Math.max(200, innerHeight - 48) : mode === 'pip' ? 400 : inlineCap();

/** The frame's height inline or in a modal: what the component asked for, else what the bridge measured. */
export const frameHeight = (explicit: number | null, measured: number | null) =>
  Math.max(40, Math.min(explicit ?? measured ?? 320, MAX_FRAME_HEIGHT));
