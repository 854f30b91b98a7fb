import { Type, type Static } from 'typebox';

/** The batch stages a hold can stop a batch in. */
export const HOLD_STAGES = ['validating', 'in_progress', 'finalizing', 'cancelling'] as const;
export type HoldStage = (typeof HOLD_STAGES)[number];

const Stage = Type.Union([Type.Literal('validating'), Type.Literal('in_progress'), Type.Literal('finalizing'), Type.Literal('cancelling')]);
const Duration = Type.String({ pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$', maxLength: 40, description: 'e.g. 10m, 1h, 30s' });

/** What a project's holds are set to (the request body of PUT, and the `work_holds` key of a project in the config file). */
export const WorkHoldsBody = Type.Object(
  {
    batch_hold_at: Type.Optional(
      Type.Array(Stage, {
        maxItems: 4,
        uniqueItems: true,
        description: 'Stages where batches stop until released: none (the default) lets them run',
      }),
    ),
    batch_pace: Type.Optional(
      Type.Object(
        {
          validating: Type.Optional(Duration),
          in_progress: Type.Optional(Duration),
          finalizing: Type.Optional(Duration),
          cancelling: Type.Optional(Duration),
        },
        { additionalProperties: false, description: 'The least time of the Standin clock a batch spends in each stage' },
      ),
    ),
    ingestion: Type.Optional(
      Type.Union([Type.Literal('hold'), Type.Literal('run')], { description: 'hold: vector store files stay in_progress until released' }),
    ),
  },
  { additionalProperties: false },
);
export type WorkHoldsBody = Static<typeof WorkHoldsBody>;

/** A project's holds as the control plane answers them. */
export const WorkHoldsObject = Type.Object({
  object: Type.Literal('project.work_holds'),
  project_id: Type.String(),
  batch_hold_at: Type.Array(Stage),
  batch_pace: Type.Object({
    validating: Type.Optional(Type.String()),
    in_progress: Type.Optional(Type.String()),
    finalizing: Type.Optional(Type.String()),
    cancelling: Type.Optional(Type.String()),
  }),
  ingestion: Type.Union([Type.Literal('hold'), Type.Literal('run')]),
});
export type WorkHoldsObject = Static<typeof WorkHoldsObject>;
