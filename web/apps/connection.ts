// Connecting to an MCP server (through Standin), and the admin key the API needs off loopback.
import { ApiError, connectServer, KEY_ITEM, signInShown } from './api.js';
import { Cell } from './cell.js';
import { obj, str } from './json.js';
import { settings } from './settings.js';
import { connection, setStatus } from './state.js';

/** The server field's text. */
export const serverText = new Cell('');
export const connecting = new Cell(false);
/** The HTTP status of the last failed connect (401: the admin key is missing or wrong). */
export const lastConnect = { status: 0 };

/** Connects (or reconnects) to a server URL or an allowed command; true when connected. */
export async function connect(input: string): Promise<boolean> {
  const server = input.trim();
  if (!server) return (setStatus('Enter the URL of an MCP server (or a command started with standin apps open).', 'error'), false);
  setStatus(`Connecting to ${server}…`);
  connecting.set(true);
  try {
    const conn = await connectServer({ server, locale: settings.locale, refresh: true });
    serverText.set(server);
    const errors = conn.findings.filter((f) => f.severity === 'error').length;
    const name = str(obj(conn.serverInfo).name) ?? server;
    setStatus(`Connected to ${name}: ${conn.tools.length} tool(s), ${errors} lint error(s), ${conn.findings.length - errors} warning(s).`);
    connection.set(conn);
    return true;
  } catch (err) {
    lastConnect.status = err instanceof ApiError ? err.status : 0;
    setStatus((err as Error).message, 'error');
    return false;
  } finally {
    connecting.set(false);
  }
}

/** Set while the page start waits for the key (a deep link runs once it is given). */
let onKey: (() => void) | null = null;
/** Resolves when the user gives a key. */
export const keyGiven = () => new Promise<void>((resolve) => (onKey = resolve));

/** Keeps the key for this tab, then resumes what waited for it (or reconnects). */
export async function signInWith(input: string) {
  const key = input.trim();
  if (!key) return setStatus('Enter the admin key of this Standin.', 'error');
  sessionStorage.setItem(KEY_ITEM, key);
  signInShown.set(false);
  setStatus('Signed in for this tab.');
  if (onKey) {
    const go = onKey;
    onKey = null;
    return go();
  }
  if (serverText.get().trim()) await connect(serverText.get());
}
