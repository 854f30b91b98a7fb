import { FILE_ID, idPattern } from '../core/ids.js';
import { badSnapshot, type Kind } from './format.js';

/**
 * What the id columns of a snapshot may hold: every primary key and every column naming another object
 * is checked against its kind's pattern (core/ids: the prefix `newId` is called with, then the tail)
 * before anything is written, so a row can carry no path, no query and no other kind's id. A new table's
 * id columns get a line here; a test holds every snapshot table's key and `…_id` columns to this list.
 */
const id = idPattern;
/** An id of any kind (an event's object, the credential of a request): a prefix and a tail, nothing else. */
const ANY_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
/** Keys that are names rather than ids (a config scope, a rate limit's key, a CSP source): bounded, no control characters. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const NAME = /^[^\x00-\x1f\x7f]{1,2048}$/;
/** The app host's own ids (`conn_…`, `file_…`, hex): letters, digits, `_` and `-`, as a stored name. */
const HOST_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** Columns of these names are the same kind of id in every table. */
const BY_NAME: Record<string, RegExp> = {
  organization_id: id('org'),
  project_id: id('proj'),
  ad_account_id: id('adacct'),
  campaign_id: id('cmp'),
  product_feed_id: id('feed'),
  service_account_id: id('svc_acct'),
  assistant_id: id('asst'),
  thread_id: id('thread'),
  run_id: id('run'),
  active_run_id: id('run'),
  made_for_thread: id('thread'),
  vector_store_id: id('vs'),
  file_id: FILE_ID,
  input_file_id: FILE_ID,
  output_file_id: FILE_ID,
  error_file_id: FILE_ID,
  endpoint_id: id('whep'),
  event_id: id('evt'),
  delivery_id: id('whdel'),
  provider_id: id('idp'),
  mapping_id: id('idpmap'),
  token_id: id('wtok'),
  ingest_id: id('ingest'),
  object_id: ANY_ID,
  credential_id: ANY_ID,
  response_id: id('resp'),
  conversation_id: id('conv'),
  container_id: id('cntr'),
  container_file_id: id('cfile'),
};

/** Each table's own columns: its `id`, and columns whose name says less than the table does. */
const BY_TABLE: Record<string, Record<string, RegExp>> = {
  ad_accounts: { id: id('adacct') },
  campaigns: { id: id('cmp') },
  ad_groups: { id: id('adgrp') },
  ads_api_keys: { id: id('adskey') },
  custom_audiences: { id: id('aud') },
  product_feeds: { id: id('feed') },
  organizations: { id: id('org') },
  projects: { id: id('proj') },
  api_keys: { id: id('key') },
  service_accounts: { id: id('svc_acct') },
  mtls_roots: { id: id('mtlsroot') },
  workload_identity_providers: { id: id('idp') },
  workload_identity_mappings: { id: id('idpmap') },
  workload_tokens: { id: id('wtok') },
  workload_exchanges: { id: id('wxchg') },
  app_host_connections: { id: HOST_ID },
  app_host_documents: { id: HOST_ID, connection: HOST_ID },
  app_host_csp_needs: { connection: HOST_ID, uri: NAME, directive: NAME, source: NAME },
  app_host_files: { id: HOST_ID },
  assistants: { id: id('asst') },
  threads: { id: id('thread') },
  thread_messages: { id: id('msg') },
  thread_runs: { id: id('run') },
  run_steps: { id: id('step') },
  files: { id: FILE_ID },
  vector_stores: { id: id('vs') },
  vector_store_file_batches: { id: id('vsfb') },
  vector_store_files: { batch_id: id('vsfb') },
  containers: { id: id('cntr') },
  container_files: { id: id('cfile') },
  batches: { id: id('batch') },
  batch_results: { batch_id: id('batch') },
  responses: { id: id('resp') },
  // An input item keeps an id its client gave it (docs/responses.md): any id, as a stored name.
  response_items: { id: ANY_ID, kind: /^(input|output)$/ },
  conversations: { id: id('conv') },
  conversation_items: { id: ANY_ID },
  image_audit_requests: { id: id('imgaudit') },
  safety_alerts: { id: id('safety_alert') },
  safety_cases: { id: id('safety_case') },
  webhook_endpoints: { id: id('whep') },
  webhook_deliveries: { id: id('whdel') },
  webhook_attempts: { id: id('whatt') },
  events: { id: id('evt') },
  jobs: { id: id('job') },
  rate_limit_faults: { id: id('fault') },
  rate_limit_config: { scope: NAME },
  rate_limit_batch_queue: { limit_key: NAME },
  models_config: { scope: NAME },
};

/** The pattern of a column's values, when it is an id or a key (undefined: a column of data). */
export function idColumnPattern(table: string, column: string): RegExp | undefined {
  return BY_TABLE[table]?.[column] ?? BY_NAME[column];
}

/**
 * The check of one table section's rows: throws when a text id column's value is not of its kind
 * (null passes: the store's own constraints say where null may be).
 */
export function idChecker(table: string, columns: [string, Kind][]): (values: unknown[], at: number) => void {
  const checks = columns.flatMap(([c, kind], i) => {
    const pattern = kind === 'text' ? idColumnPattern(table, c) : undefined;
    return pattern ? [{ i, c, pattern }] : [];
  });
  return (values, at) => {
    for (const { i, c, pattern } of checks) {
      const v = values[i];
      if (v !== null && !pattern.test(v as string))
        throw badSnapshot(
          `line ${at}: ${table}.${c} is ${JSON.stringify(String(v).slice(0, 100))}, not an id of its kind (${pattern.source})`,
        );
    }
  };
}
