/** A multipart/form-data body for `app.inject` (fields in the order given; a file is `{ filename, data }`). */
export function form(parts: [string, string | { filename: string; data: Buffer | string }][]): {
  payload: Buffer;
  headers: Record<string, string>;
} {
  const boundary = `----standin${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of parts) {
    if (typeof value === 'string') {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    } else {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${value.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
        ),
      );
      chunks.push(Buffer.isBuffer(value.data) ? value.data : Buffer.from(value.data));
      chunks.push(Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
