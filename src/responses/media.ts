import { invalid } from '../core/errors.js';
import type { Outbound } from '../core/outbound.js';

/**
 * The bytes behind an image or file input (a data URL, or a URL fetched through the SSRF-guarded client),
 * bounded in size and time, and what an image's header says of it. Nothing here decodes an image: its
 * type and pixel size are read from the first bytes (docs/responses.md, "Inputs").
 */

/** The most an image or file input may weigh (the platform's limit per file input is 50 MB; images 20 MB). */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** How long fetching one `image_url` or `file_url` may take in all. */
export const FETCH_TIMEOUT_MS = 10_000;

export interface Fetched {
  data: Buffer;
  /** The media type the source declared (the data URL's, or the answer's Content-Type), if any. */
  mediaType: string | null;
  /** The last segment of a URL's path, for a file's name. */
  name: string | null;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/i;

/** Decodes a `data:` URL (base64 or percent-encoded); refused past `maxBytes` before decoding. */
export function readDataUrl(url: string, maxBytes: number, param: string): Fetched {
  const m = DATA_URL.exec(url);
  if (!m) throw invalid(`'${param}' is not a valid data URL (data:<media type>;base64,<data>).`, param, 'invalid_value');
  const body = url.slice(m[0].length);
  const base64 = /;base64$/i.test(m[2]);
  // Base64 holds 3 bytes in 4 characters: the size is known before anything is decoded.
  const size = base64 ? Math.floor((body.length * 3) / 4) : body.length;
  if (size > maxBytes) throw tooLarge(param, maxBytes);
  if (base64 && !/^[A-Za-z0-9+/=\s]*$/.test(body)) throw invalid(`'${param}' is not valid base64.`, param, 'invalid_value');
  const data = base64 ? Buffer.from(body, 'base64') : Buffer.from(decodeURIComponent(body), 'utf8');
  return { data, mediaType: m[1] || null, name: null };
}

const tooLarge = (param: string, maxBytes: number) =>
  invalid(`'${param}' is larger than ${Math.round(maxBytes / (1024 * 1024))} MB.`, param, 'file_too_large');

/**
 * GETs an http(s) URL through `outbound` (its address check runs at connect time, after DNS), without
 * following redirects, reading at most `maxBytes` within FETCH_TIMEOUT_MS.
 */
export async function fetchUrl(outbound: Outbound, raw: string, maxBytes: number, param: string): Promise<Fetched> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`'${param}' is not a valid URL.`, param, 'invalid_value');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(`'${param}' must be an http(s) URL or a data URL.`, param, 'invalid_value');
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const code = param.endsWith('image_url') ? 'invalid_image_url' : 'invalid_file_url';
  const failed = (why: string) => invalid(`Standin could not fetch '${param}' (${url.host}): ${why}.`, param, code);
  let res: Awaited<ReturnType<Outbound['request']>>;
  try {
    res = await outbound.request(url, { method: 'GET', signal, headersTimeout: FETCH_TIMEOUT_MS, bodyTimeout: FETCH_TIMEOUT_MS });
  } catch (err) {
    const e = err as { code?: string; message?: string };
    throw failed(e.code === 'ERR_SSRF_BLOCKED' ? (e.message ?? 'address refused') : signal.aborted ? 'timed out' : (e.message ?? 'failed'));
  }
  // The body is destroyed when it is refused: an abort that comes after (the time limit) has no one to tell.
  res.body.on('error', () => {});
  if (res.statusCode !== 200) {
    res.body.destroy();
    throw failed(`it answered ${res.statusCode}`);
  }
  const declared = Number(res.headers['content-length']);
  if (declared > maxBytes) {
    res.body.destroy();
    throw tooLarge(param, maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        throw tooLarge(param, maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if ((err as { param?: string }).param === param) throw err;
    throw failed(signal.aborted ? 'timed out' : ((err as Error).message ?? 'failed'));
  }
  const type = res.headers['content-type'];
  const name = decodeURIComponent(url.pathname.split('/').pop() ?? '') || null;
  return { data: Buffer.concat(chunks), mediaType: typeof type === 'string' ? type.split(';')[0].trim() : null, name };
}

export interface ImageInfo {
  mediaType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
  width: number;
  height: number;
}

/** The type and pixel size of a PNG, JPEG, GIF or WebP image from its header bytes; null for anything else. */
export function imageInfo(b: Buffer): ImageInfo | null {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a && b.toString('latin1', 12, 16) === 'IHDR')
    return { mediaType: 'image/png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6)))
    return { mediaType: 'image/gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpeg(b);
  return null;
}

function webp(b: Buffer): ImageInfo | null {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ' && b.length >= 30)
    return { mediaType: 'image/webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L' && b.length >= 25 && b[20] === 0x2f) {
    const bits = b.readUInt32LE(21);
    return { mediaType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X' && b.length >= 30)
    return { mediaType: 'image/webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return null;
}

/** A JPEG's size from its first start-of-frame marker, walking the segments (each says its length). */
function jpeg(b: Buffer): ImageInfo | null {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC), carry the frame's height and width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { mediaType: 'image/jpeg', height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2;
      continue;
    }
    at += 2 + b.readUInt16BE(at + 2);
  }
  return null;
}
