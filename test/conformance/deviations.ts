/**
 * Where Standin deliberately differs from the platform's official OpenAPI document, each with its reason.
 * The validator (validator.ts) reads this list and nothing else; docs/conformance.md lists the same
 * entries, and conformance.test.ts checks that the two agree.
 *
 * An entry either loosens one field of one component (`component`, `field`, `allow`: the field may be
 * absent, may hold anything, may be null, or may hold values the document's enum lacks), or sets aside
 * the document's schema of one reply status of one operation (`operation`, `status`), or names a request
 * example of the document that Standin refuses (`example`).
 */
export interface Deviation {
  component?: string;
  field?: string;
  allow?: 'absent' | 'any' | 'null' | 'extra-values';
  operation?: string;
  status?: number;
  /** A request example of the document Standin refuses: `POST /threads (Messages)`: the operation and the title. */
  example?: string;
  reason: string;
}

export const DEVIATIONS: Deviation[] = [
  {
    component: 'MCPApprovalResponseResource',
    field: 'request_id',
    allow: 'absent',
    reason:
      "The document requires a `request_id` it never defines (the request answered is `approval_request_id`, which it also requires); an `mcp_approval_response` item has none, as the platform's SDK types show.",
  },
  {
    component: 'Batch',
    field: '*',
    allow: 'null',
    reason:
      "A batch's optional members not set yet (`errors`, `output_file_id`, `error_file_id`, the `*_at` times) are null, as the document's own examples show; its schema leaves null out.",
  },
  {
    component: 'List*Response',
    field: 'first_id',
    allow: 'null',
    reason: 'An empty list has no first or last object: `first_id` and `last_id` are null, as on the platform; the schemas leave null out.',
  },
  {
    component: 'List*Response',
    field: 'last_id',
    allow: 'null',
    reason: 'An empty list has no first or last object: `first_id` and `last_id` are null, as on the platform; the schemas leave null out.',
  },
  {
    component: 'OpenAIFile',
    field: 'purpose',
    allow: 'extra-values',
    reason:
      "A file uploaded with purpose `evals` (which POST /v1/files accepts, as the platform's upload does) keeps it; the enum of the file object lacks it.",
  },
  {
    component: 'OpenAIFile',
    field: 'expires_at',
    allow: 'null',
    reason: "A file that never expires has `expires_at: null`, as the document's own examples show; its schema leaves null out.",
  },
  {
    component: 'OpenAIFile',
    field: 'status_details',
    allow: 'null',
    reason: 'A file that was processed has no `status_details` (null): the field is deprecated and only ever explains a failure.',
  },
  {
    component: 'CreateChatCompletionResponse',
    field: 'system_fingerprint',
    allow: 'null',
    reason: "The built-in and upstream models have no backend fingerprint: `system_fingerprint: null`, as in the document's own examples.",
  },
  {
    component: 'CreateChatCompletionStreamResponse',
    field: 'system_fingerprint',
    allow: 'null',
    reason:
      "The built-in and upstream models have no backend fingerprint: each chunk's `system_fingerprint` is null, as the whole reply's is.",
  },
  {
    component: 'Embedding',
    field: 'embedding',
    allow: 'any',
    reason:
      'With `encoding_format: base64` (what the 4.x SDK asks for by default) the vector is a base64 string; the schema describes floats only.',
  },
  {
    component: 'ModelResponseProperties',
    field: 'user',
    allow: 'null',
    reason: "A response created without `user` has `user: null`, as the document's own examples show; its schema leaves null out.",
  },
  {
    component: 'Response',
    field: 'usage',
    allow: 'null',
    reason:
      'A response still queued or in progress (`background: true`) has no usage yet: `usage: null`, as on the platform; the schema leaves null out.',
  },
  {
    operation: 'DELETE /responses/{response_id}',
    status: 404,
    reason:
      'The document gives this 404 the bare `Error` object; Standin answers it, as every error, in the envelope `{"error": {…}}` the platform uses and the SDKs read.',
  },
  {
    operation: 'POST /responses/{response_id}/cancel',
    status: 404,
    reason:
      'The document gives this 404 the bare `Error` object; Standin answers it, as every error, in the envelope `{"error": {…}}` the platform uses and the SDKs read.',
  },
  {
    component: 'Container*ListResource',
    field: 'first_id',
    allow: 'null',
    reason:
      'An empty list of containers or of container files has no first or last object: `first_id` and `last_id` are null, as in every other list; the schemas leave null out.',
  },
  {
    component: 'Container*ListResource',
    field: 'last_id',
    allow: 'null',
    reason:
      'An empty list of containers or of container files has no first or last object: `first_id` and `last_id` are null, as in every other list; the schemas leave null out.',
  },
  {
    example: 'POST /chat/completions (Image input)',
    reason:
      'Chat messages are text: an `image_url` content part is refused (400 `unsupported_value`) rather than ignored, since no model behind Standin is known to see images.',
  },
  {
    example: 'POST /chat/completions (Logprobs)',
    reason:
      'Standin computes no token log probabilities: `logprobs` is refused (400 `unsupported_parameter`) rather than answered with made-up numbers.',
  },
  {
    example: 'POST /containers (Default)',
    reason:
      "The example names `skills` and an allow-list `network_policy`: Standin's containers run the code_interpreter executor with no network and no skills, so both are refused (400 `unsupported_parameter` naming the field) rather than ignored.",
  },
  {
    example: 'POST /responses (Image input)',
    reason:
      "The example's image is at a public URL, which Standin fetches through its outbound guard: the tests run with no network, so the fetch fails (400 `invalid_image_url`). A data URL or a `file_id` is read.",
  },
  {
    example: 'POST /responses (File input)',
    reason:
      "The example's file is at a public URL, which Standin fetches through its outbound guard: the tests run with no network, so the fetch fails (400 `invalid_file_url`). `file_data` or a `file_id` is read.",
  },
  {
    example: 'POST /responses (Web search)',
    reason:
      'Web search is not run offline: the `web_search_preview` tool is refused (400 naming `tools[0].type`) rather than ignored (docs/responses.md, Tools).',
  },
  {
    example: 'POST /responses/compact (Default)',
    reason:
      "Compaction is not built: its item carries the platform model's encrypted summary, which Standin cannot make; the endpoint answers 400 `unsupported_endpoint` naming itself.",
  },
  {
    example: 'POST /vector_stores/{vector_store_id}/file_batches (Default)',
    reason:
      "The example writes the static chunking strategy flat (`max_chunk_size_tokens` beside `type`); the document's own schema (StaticChunkingStrategyRequestParam) nests it under `static`, as Standin does.",
  },
  {
    example: 'POST /vector_stores/{vector_store_id}/search (Default)',
    reason: 'The example is not JSON (`"filters": {...}` is a placeholder): it answers 400 `invalid_json`.',
  },
];
