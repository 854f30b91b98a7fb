/**
 * The environment variables a config may name as an upstream's key (`api_key_env` of a model or embeddings
 * server): only those whose name says they are one. A config can be sent to the control plane, and the key
 * goes to whatever `base_url` the config names, so any other variable (`HOME`, a cloud token) must never be
 * readable through it. The config file on disk can still read any variable: `api_key: { env: NAME }`.
 */
export const UPSTREAM_KEY_ENV_PREFIX = 'STANDIN_UPSTREAM_';

/** The value of the variable `name`, which must carry the prefix and be set; throws naming `where` and the rule. */
export function upstreamKeyFromEnv(name: string, where: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!name.startsWith(UPSTREAM_KEY_ENV_PREFIX) || name.length === UPSTREAM_KEY_ENV_PREFIX.length)
    throw new Error(
      `${where}: '${name}' is not an upstream key variable: api_key_env names only variables starting with ${UPSTREAM_KEY_ENV_PREFIX} (the config file on disk may use api_key: { env: ${name} })`,
    );
  const value = env[name];
  if (!value) throw new Error(`${where}: environment variable ${name} is not set`);
  return value;
}
