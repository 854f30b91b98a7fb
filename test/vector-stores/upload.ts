import { form } from '../files/form.js';
import { TEST_KEYS, type TestStandin } from '../helpers.js';

/** Uploads a file through `POST /v1/files` (purpose `assistants` unless given) and returns its id. */
export async function uploadFile(
  s: TestStandin,
  filename: string,
  data: Buffer | string,
  purpose = 'assistants',
  key = TEST_KEYS.platform,
): Promise<string> {
  const { payload, headers } = form([
    ['purpose', purpose],
    ['file', { filename, data }],
  ]);
  const res = await s.app.inject({ method: 'POST', url: '/v1/files', payload, headers: { ...headers, authorization: `Bearer ${key}` } });
  if (res.statusCode !== 200) throw new Error(`upload failed: ${res.body}`);
  return res.json().id;
}
