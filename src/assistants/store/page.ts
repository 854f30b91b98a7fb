/** Page sizes of every list of the threads interface (`limit` 1–100, default 20). */
export const LIST = { defaultLimit: 20, maxLimit: 100 };
