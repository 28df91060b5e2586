/**
 * Arena's game rules that the game and its console share: items, the daily mission, the other
 * missions, and how the console pages and searches them. The native console plugin
 * (plugins/arena-console-native) implements the same rules in C, with the same answers.
 */

/** Items and their names; gifts may hold the giftable ones. */
export const ITEMS: Record<string, string> = { gem: 'Gem', medal: 'Medal', potion: 'Potion', sword: 'Sword' };
export const GIFTABLE: ReadonlyArray<readonly [string, string]> = [['gem', 'Gem'], ['potion', 'Potion'], ['sword', 'Sword']];

/** The one inventory type: a player's bag, whose id is the account id (the login name). */
export const INVENTORY_TYPE = 'bag';

/** The daily mission: click 100 times in a UTC day; the reward, a medal, lands in the bag. */
export const DAILY = { mission_id: 'daily_clicks', description: 'Click 100 times', goal: 100, reward: 'medal' } as const;

const two = (n: number): string => (n < 10 ? '0' : '') + n;

/**
 * `time.toISOString()`, built in JavaScript: V8 formats it through `snprintf`, which costs about
 * twice as much and shows in a console read's profile.
 */
export function isoTime(time: Date): string {
  const year = time.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return time.toISOString(); // and an invalid date throws as it does
  const ms = time.getUTCMilliseconds();
  return `${year}-${two(time.getUTCMonth() + 1)}-${two(time.getUTCDate())}T${two(time.getUTCHours())}:` +
    `${two(time.getUTCMinutes())}:${two(time.getUTCSeconds())}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/** The UTC day of a time, `YYYY-MM-DD` (the key of `clicks_by_day`). */
export function dayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** The daily mission's record for one day. */
export function dailyRecord(date: string, clicks: number): Record<string, unknown> {
  const completed = clicks >= DAILY.goal;
  return {
    mission_id: DAILY.mission_id, description: DAILY.description, period: 'daily', date,
    progress: Math.min(clicks, DAILY.goal), goal: DAILY.goal, completed, rewarded: completed,
    rewards: [{ item_id: DAILY.reward, quantity: 1 }],
  };
}

/** Normal and achievement missions, measured on the player's score or the character's level. */
export const MISSIONS = [
  { type: 'normal', category: 'tutorial', mission_id: 'first_click', description: 'Click once', metric: 'score', goal: 1 },
  { type: 'achievement', category: 'clicks', mission_id: 'clicks_10', description: 'Click 10 times', metric: 'score', goal: 10 },
  { type: 'achievement', category: 'clicks', mission_id: 'clicks_100', description: 'Click 100 times', metric: 'score', goal: 100 },
  { type: 'achievement', category: 'clicks', mission_id: 'clicks_1000', description: 'Click 1000 times', metric: 'score', goal: 1000 },
  { type: 'achievement', category: 'levels', mission_id: 'level_5', description: 'Reach level 5', metric: 'level', goal: 5 },
  { type: 'achievement', category: 'levels', mission_id: 'level_10', description: 'Reach level 10', metric: 'level', goal: 10 },
] as const;

export const MISSION_CATEGORIES = { normal: ['tutorial'], achievement: ['clicks', 'levels'] } as const;
export const MISSION_SEARCH = ['mission_id', 'description'] as const;
export const SEARCH_CONDITIONS = ['name', 'name_prefix', 'nickname'] as const;
export const NOTICE_CATEGORIES = ['lobby'] as const;
export const CAMPAIGN = 'double_clicks';

/** Entries of page `page_no` of `page_size`. */
export function page<T>(items: readonly T[], p: { page_no: number; page_size: number }): T[] {
  return items.slice(p.page_no * p.page_size, (p.page_no + 1) * p.page_size);
}

/** A whole number written in decimal digits only (a path value), or null. */
export function parseCount(text: string): number | null {
  return /^\d{1,15}$/.test(text) ? Number(text) : null;
}
