/**
 * Calendar months in UTC from epoch milliseconds, by arithmetic (Standin reads time only from its
 * clock, and keeps `Date` out of modules): Howard Hinnant's civil-from-days.
 */
const DAY_MS = 86_400_000;

function civil(days: number): { y: number; m: number; d: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** `YYYY-MM` of the UTC month containing `ms`. */
export function monthKey(ms: number): string {
  const { y, m } = civil(Math.floor(ms / DAY_MS));
  return `${y}-${String(m).padStart(2, '0')}`;
}

/** Milliseconds from `ms` to the start of the next UTC month. */
export function msToMonthEnd(ms: number): number {
  const { y, m } = civil(Math.floor(ms / DAY_MS));
  const next = m === 12 ? daysFromCivil(y + 1, 1, 1) : daysFromCivil(y, m + 1, 1);
  return next * DAY_MS - ms;
}
