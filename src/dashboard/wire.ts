/**
 * The wire types of the control plane as the dashboard (web/dashboard) reads them: each one the static type
 * of the route's own TypeBox schema, so a change to a reply's shape breaks the dashboard's typecheck, not
 * its users. Types only: web/ may import this file (type-only, checked by dependency-cruiser) and nothing
 * else of src/.
 */
import type { Static, TSchema } from 'typebox';
import type { ClockView, LoggedRequest, LoggedRequestDetail } from '../admin/schemas.js';
import type { AdAccountObject, AudienceObject, CampaignObject, FeedObject } from '../ads/schemas.js';
import type { RunEventList, RunObject, RunStepObject, ThreadObject } from '../assistants/objects.js';
import type { AdminBatch } from '../batches/schemas.js';
import type { ContainerFileObject, ContainerObject } from '../containers/schemas.js';
import type { ErrorEnvelope, ListOf } from '../core/schemas.js';
import type { FileObject } from '../files/schemas.js';
import type { ApiKeyObject, OrganizationObject, ProjectObject, ServiceAccountObject } from '../identity/schemas.js';
import type { ExchangeObject, ProviderList, RootObject } from '../identity/workload/schemas.js';
import type { FaultObject, HistoryView, OrganizationRateLimitsView, RateLimitsView } from '../ratelimit/schemas.js';
import type { AdminResponseEvents, AdminResponseSummary } from '../responses/admin-schemas.js';
import type { ItemResource } from '../responses/input-schemas.js';
import type { ResponseObject } from '../responses/schemas.js';
import type { ConversationObject } from '../conversations/objects.js';
import type { StoreFileObject, VectorStoreObject } from '../vector-stores/schemas.js';
import type { EventTypeList, ObjectEventObject, WebhookDeliveryObject, WebhookEndpointObject } from '../webhooks/schemas.js';
import type { LookupView, SessionView } from './schemas.js';

/** A cursor page of `T` (`ListOf` of core/schemas). */
export type List<T> = Omit<Static<ReturnType<typeof ListOf<TSchema>>>, 'data'> & { data: T[] };

/** The error envelope of every API. */
export type ErrorBody = Static<typeof ErrorEnvelope>;

export type Clock = Static<typeof ClockView>;
export type Logged = Static<typeof LoggedRequest>;
export type LoggedDetail = Static<typeof LoggedRequestDetail>;
export type Fault = Static<typeof FaultObject>;

export type Organization = Static<typeof OrganizationObject>;
export type Project = Static<typeof ProjectObject>;
export type ApiKey = Static<typeof ApiKeyObject>;
export type ServiceAccount = Static<typeof ServiceAccountObject>;
export type Provider = Static<typeof ProviderList>['data'][number];
export type MtlsRoot = Static<typeof RootObject>;
export type Exchange = Static<typeof ExchangeObject>;

export type AdAccount = Static<typeof AdAccountObject>;
export type Campaign = Static<typeof CampaignObject>;
export type Audience = Static<typeof AudienceObject>;
export type Feed = Static<typeof FeedObject>;

export type Endpoint = Static<typeof WebhookEndpointObject>;
export type Delivery = Static<typeof WebhookDeliveryObject>;
export type ObjectEvent = Static<typeof ObjectEventObject>;
export type EventType = Static<typeof EventTypeList>['data'][number];

export type Thread = Static<typeof ThreadObject>;
export type Run = Static<typeof RunObject>;
export type Step = Static<typeof RunStepObject>;
export type RunEvent = Static<typeof RunEventList>['data'][number];

export type FileRow = Static<typeof FileObject>;
export type VectorStore = Static<typeof VectorStoreObject>;
export type StoreFile = Static<typeof StoreFileObject>;
export type Batch = Static<typeof AdminBatch>;
export type Container = Static<typeof ContainerObject>;
export type ContainerFile = Static<typeof ContainerFileObject>;

/** A stored response (`Response` of /v1/responses; named so as not to hide the DOM's Response). */
export type StoredResponse = Static<typeof ResponseObject>;
export type ResponseSummary = Static<typeof AdminResponseSummary>;
export type ResponseEvent = Static<typeof AdminResponseEvents>['data'][number];
/** An input or output item as listed (`ItemResource`). */
export type Item = Static<typeof ItemResource>;
export type Conversation = Static<typeof ConversationObject>;

export type History = Static<typeof HistoryView>;
export type HistoryPoint = History['series'][number]['points'][number];
export type RateLimits = Static<typeof RateLimitsView>;
export type OrganizationRateLimits = Static<typeof OrganizationRateLimitsView>;

export type Session = Static<typeof SessionView>;
export type Lookup = Static<typeof LookupView>;
