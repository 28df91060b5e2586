/**
 * Arena's operations-console handlers, managed half (served when DeployApiService has
 * `deploy_api_service_use_managed: true`). Account ids are login names, character ids the
 * ArenaCharacter object ids, the one inventory is the player's bag (id: the account id). Effects
 * on live sessions go through arena's own events: `arena.kick` closes a player's session,
 * `arena.notice` pushes a notice; both run once the console event's changes are committed.
 *
 * Refund: the purchase log names the account a purchase credited and the items it credited,
 * `{account_id, items: [{item_id, quantity}]}`; the refund takes those items back from the bag
 * (all or nothing) and records the receipt on the account, so a receipt is refunded once.
 */
import type { GameObject, InventoryReclaim, JsonObjectWriter, PluginApi, VoidWriter, WriterBase } from 'gsf';
import {
  CAMPAIGN, GIFTABLE, INVENTORY_TYPE, ITEMS, MISSION_CATEGORIES, MISSION_SEARCH, MISSIONS, NOTICE_CATEGORIES, SEARCH_CONDITIONS,
  dailyRecord, isoTime, page, parseCount,
} from './rules.ts';

type Player = GameObject<'ArenaPlayer'>;

/** Most of one item a purchase log may name (keeps quantities exact in both halves). */
const MAX_PURCHASE_QUANTITY = 1_000_000;

/** The account and items of a purchase log, or what is wrong with it. */
function purchaseOf(log: Record<string, unknown>): { account_id: string; items: Array<{ item_id: string; quantity: number }> } | string {
  const account = log.account_id;
  if (typeof account !== 'string' || account === '') return "purchase log 'account_id' must be a non-empty string";
  const items = log.items;
  if (!Array.isArray(items) || items.length === 0) return "purchase log 'items' must be a non-empty array of objects";
  const out: Array<{ item_id: string; quantity: number }> = [];
  for (const [i, item] of (items as unknown[]).entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return `purchase log 'items[${i}]' must be an object`;
    const { item_id, quantity } = item as Record<string, unknown>;
    if (typeof item_id !== 'string' || !Object.hasOwn(ITEMS, item_id)) {
      return `purchase log 'items[${i}].item_id' must be an arena item (${Object.keys(ITEMS).sort().join(', ')})`;
    }
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1 || quantity > MAX_PURCHASE_QUANTITY) {
      return `purchase log 'items[${i}].quantity' must be an integer from 1 to ${MAX_PURCHASE_QUANTITY}`;
    }
    out.push({ item_id, quantity });
  }
  return { account_id: account, items: out };
}

/**
 * GetUser's answer. A function of the module, not a closure made per request: the TypeScript
 * loader names every closure it makes (`Object.defineProperty`), which costs more than the rest
 * of this answer.
 */
function answerUser(id: string, p: Player | null, res: JsonObjectWriter): void {
  if (p === null) return res.fail('NOT_FOUND', `no account '${id}'`);
  res.ok({
    account_id: id, name: p.get('name'), score: p.get('score'), banned: p.get('banned'), logged_in: p.get('session') !== 0,
    joined: isoTime(p.get('joined')), character_id: p.get('character'),
  });
}

/** Registers the console handler and its rules. */
export function registerConsole(api: PluginApi): void {
  const { objects } = api;

  const player = async (name: string, res: WriterBase, mode: 'read' | 'write' = 'read'): Promise<Player | null> => {
    const p = await objects.fetchBy('ArenaPlayer', 'name', name, mode);
    if (p === null) res.fail('NOT_FOUND', `no account '${name}'`);
    return p;
  };
  const character = async (id: string, res: WriterBase, mode: 'read' | 'write' = 'read'): Promise<GameObject<'ArenaCharacter'> | null> => {
    const c = await objects.fetch('ArenaCharacter', id, mode);
    if (c === null) res.fail('NOT_FOUND', `no character '${id}'`);
    return c;
  };
  const ownerOf = async (c: GameObject<'ArenaCharacter'>, mode: 'read' | 'write' = 'read'): Promise<Player | null> =>
    c.get('player') === null ? null : objects.fetch('ArenaPlayer', c.get('player')!, mode);
  const give = (p: Player, items: ReadonlyArray<{ item_id: string; quantity: number }>): void => {
    const bag = { ...p.get('inventory') };
    for (const { item_id, quantity } of items) bag[item_id] = (bag[item_id] ?? 0) + quantity;
    p.set('inventory', bag);
  };
  /**
   * Whether the player's session is found (null: not logged in); an operator is told at once
   * when it cannot be looked up (the cluster is unavailable), rather than 204 for a kick that
   * never happens.
   */
  const located = async (name: string, res: VoidWriter): Promise<{ sessionId: number | null } | null> => {
    try {
      return { sessionId: await api.accounts.locate(name) };
    } catch (err) {
      res.fail('UNAVAILABLE', `cannot look up ${name}'s session: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    }
  };
  /** Closes a session `located` found, once the console event's changes are committed. */
  const kick = (name: string, reason: string, where: { sessionId: number | null }): void => {
    if (where.sessionId !== null) api.invoke('arena.kick', { name, reason });
  };

  api.console.registerDeployApiHandler({
    getUserSearchConditions: (_req, res) => res.ok([...SEARCH_CONDITIONS]),
    async searchUsers({ condition, value, ...p }, res) {
      let names: string[];
      if (condition === 'name') {
        names = (await objects.fetchBy('ArenaPlayer', 'name', value)) ? [value] : [];
      } else if (condition === 'name_prefix') {
        const roster = await objects.fetch('ArenaRoster', 'roster');
        names = (roster?.get('names') ?? []).filter((n) => n.startsWith(value));
      } else if (condition === 'nickname') {
        const c = await objects.fetchBy('ArenaCharacter', 'nickname', value);
        const owner = c && await ownerOf(c);
        names = owner ? [owner.get('name')] : [];
      } else {
        res.fail('INVALID_ARGUMENT', `unknown search condition '${condition}' (${SEARCH_CONDITIONS.join(', ')})`);
        return;
      }
      res.ok({ users: page(names, p).map((account_id) => ({ account_id })) });
    },
    getUser({ id }, res) {
      // A cached account is answered at once, so the request's event never parks.
      const known = objects.fetchCachedBy('ArenaPlayer', 'name', id);
      if (known !== undefined) return answerUser(id, known, res);
      return objects.fetchBy('ArenaPlayer', 'name', id).then((p) => answerUser(id, p, res));
    },
    async updateUser({ id, field, value }, res) {
      const score = parseCount(value);
      if (field !== 'score' || score === null) return res.fail('INVALID_ARGUMENT', `score must be an integer >= 0 (got '${value}')`);
      const p = await player(id, res, 'write');
      if (!p) return;
      p.set('score', score);
      api.counters.update('arena_scores', id, score);
      res.ok();
    },
    async isLoggedIn({ id }, res) {
      const p = await player(id, res);
      if (p) res.ok(p.get('session') !== 0);
    },
    async forceLogout({ id }, res) {
      if (!await player(id, res)) return;
      const where = await located(id, res);
      if (where === null) return;
      kick(id, 'logged out by an operator', where);
      res.ok();
    },
    async getUserBanned({ id }, res) {
      const p = await player(id, res);
      if (p) res.ok(p.get('banned'));
    },
    async banUser({ id }, res) {
      const p = await player(id, res, 'write');
      if (!p) return;
      const where = await located(id, res);
      if (where === null) return;
      p.set('banned', true);
      kick(id, 'banned by an operator', where);
      res.ok();
    },
    async unbanUser({ id }, res) {
      const p = await player(id, res, 'write');
      if (!p) return;
      p.set('banned', false);
      res.ok();
    },
    async getCharacters({ id }, res) {
      const p = await player(id, res);
      if (!p) return;
      const c = p.get('character') === null ? null : await objects.fetch('ArenaCharacter', p.get('character')!);
      res.ok(c ? [{ character_id: c.id, nickname: c.get('nickname'), level: c.get('level') }] : []);
    },
    async getCharacter({ id }, res) {
      const c = await character(id, res);
      if (!c) return;
      const owner = await ownerOf(c);
      res.ok({ character_id: c.id, nickname: c.get('nickname'), level: c.get('level'), account_id: owner?.get('name') ?? null });
    },
    async updateCharacter({ id, field, value }, res) {
      const c = await character(id, res, 'write');
      if (!c) return;
      if (field === 'level') {
        const level = parseCount(value);
        if (level === null || level < 1 || level > 100) return res.fail('INVALID_ARGUMENT', `level must be an integer from 1 to 100 (got '${value}')`);
        c.set('level', level);
      } else {
        const other = await objects.fetchBy('ArenaCharacter', 'nickname', value);
        if (other !== null && other.id !== c.id) return res.fail('CONFLICT', `nickname '${value}' is taken`);
        c.set('nickname', value);
      }
      res.ok();
    },
    async getCharacterInventoryInfo({ id }, res) {
      const c = await character(id, res);
      if (!c) return;
      const owner = await ownerOf(c);
      res.ok(owner ? [{ type: INVENTORY_TYPE, slots: [owner.get('name')] }] : []);
    },
    async getInventory({ type, id, ...p }, res) {
      if (type !== INVENTORY_TYPE) return res.fail('NOT_FOUND', `no inventory type '${type}' (arena has '${INVENTORY_TYPE}')`);
      const owner = await player(id, res);
      if (!owner) return;
      const bag = owner.get('inventory');
      res.ok(page(Object.keys(bag).sort().map((item_id) => ({ item_id, name: ITEMS[item_id] ?? item_id, quantity: bag[item_id] })), p));
    },
    async deleteInventoryItem(req, res) {
      await reclaimAll([{ type: req.type, id: req.id, items: [req] }], res);
    },
    async deleteMultipleInventoryItems({ inventories }, res) {
      await reclaimAll(inventories, res);
    },
    async giveGift({ target_type, items, users }, res) {
      // An account listed again (by name, or through its character) is gifted once.
      const targets = new Map<string, Player>();
      for (const user of users) {
        if (target_type === 'account') {
          const p = await player(user, res, 'write');
          if (!p) return;
          targets.set(p.id, p);
          continue;
        }
        const c = await character(user, res);
        if (!c) return;
        const p = await ownerOf(c, 'write');
        if (!p) return res.fail('NOT_FOUND', `no account owns character '${user}'`);
        targets.set(p.id, p);
      }
      for (const p of targets.values()) give(p, items);
      res.ok();
    },
    async giveGiftToAll({ items }, res) {
      const roster = await objects.fetch('ArenaRoster', 'roster');
      for (const name of roster?.get('names') ?? []) {
        const p = await objects.fetchBy('ArenaPlayer', 'name', name, 'write');
        if (p) give(p, items);
      }
      res.ok();
    },
    async refund({ receipt_id, purchase_log }, res) {
      const purchase = purchaseOf(purchase_log);
      if (typeof purchase === 'string') return res.fail('INVALID_ARGUMENT', purchase);
      const p = await player(purchase.account_id, res, 'write');
      if (!p) return;
      if (p.get('refunds').includes(receipt_id)) return res.fail('CONFLICT', `receipt '${receipt_id}' is already refunded`);
      const bag = { ...p.get('inventory') };
      for (const { item_id, quantity } of purchase.items) {
        const held = bag[item_id] ?? 0;
        if (held < quantity) return res.fail('CONFLICT', `cannot take back ${quantity} ${item_id}: the inventory holds ${held}`);
        if (held === quantity) delete bag[item_id];
        else bag[item_id] = held - quantity;
      }
      p.set('inventory', bag);
      p.set('refunds', [...p.get('refunds'), receipt_id]);
      res.ok();
    },
    sendRealtimeNotice({ category, color, messages }, res) {
      api.invoke('arena.notice', { category, color, messages });
      res.ok();
    },
    async getCharacterPeriodicMissionStatus({ id, period, start_date, ...p }, res) {
      const c = await character(id, res);
      if (!c) return;
      const owner = await ownerOf(c);
      const days = owner?.get('clicks_by_day') ?? {};
      const records = period !== 'daily' ? [] : Object.keys(days).filter((d) => d >= start_date).sort().map((d) => dailyRecord(d, days[d]!));
      res.ok(page(records, p));
    },
    async getCharacterMissionStatus({ id, type, category, condition, value, is_completed, ...p }, res) {
      if (condition !== '' && !(MISSION_SEARCH as readonly string[]).includes(condition)) {
        return res.fail('INVALID_ARGUMENT', `unknown mission search condition '${condition}' (${MISSION_SEARCH.join(', ')})`);
      }
      const c = await character(id, res);
      if (!c) return;
      const owner = await ownerOf(c);
      const metrics = { score: owner?.get('score') ?? 0, level: c.get('level') };
      const records = MISSIONS
        .filter((m) => m.type === type && m.category === category)
        .filter((m) => condition === '' || m[condition as 'mission_id' | 'description'].includes(value))
        .map((m) => ({
          mission_id: m.mission_id, description: m.description, category: m.category,
          progress: Math.min(metrics[m.metric], m.goal), goal: m.goal, completed: metrics[m.metric] >= m.goal,
        }))
        .filter((m) => is_completed === null || m.completed === is_completed);
      res.ok(page(records, p));
    },
  });

  /**
   * Takes `reclaimed` of each item whose quantity is what the console saw (`expected_quantity`),
   * all or nothing: every bag is checked on a copy before any is changed.
   */
  async function reclaimAll(inventories: InventoryReclaim[], res: VoidWriter): Promise<void> {
    const bags = new Map<Player, Record<string, number>>();
    for (const inv of inventories) {
      if (inv.type !== INVENTORY_TYPE) return res.fail('NOT_FOUND', `no inventory type '${inv.type}' (arena has '${INVENTORY_TYPE}')`);
      const owner = await player(inv.id, res, 'write');
      if (!owner) return;
      let bag = bags.get(owner);
      if (!bag) bags.set(owner, bag = { ...owner.get('inventory') });
      for (const r of inv.items) {
        const held = bag[r.item_id] ?? 0;
        if (held !== r.expected_quantity) return res.fail('CONFLICT', `the console shows ${r.expected_quantity} ${r.item_id}, the inventory holds ${held}`);
        if (r.reclaimed > held) return res.fail('INVALID_ARGUMENT', `cannot reclaim ${r.reclaimed} ${r.item_id}: the inventory holds ${held}`);
        if (held === r.reclaimed) delete bag[r.item_id];
        else bag[r.item_id] = held - r.reclaimed;
      }
    }
    for (const [owner, bag] of bags) owner.set('inventory', bag);
    res.ok();
  }

  api.console.setEditableFieldsForUser(['score']);
  api.console.setEditableFieldsForCharacter(['nickname', 'level']);
  api.console.setGiftableItems(GIFTABLE);
  api.console.setRealtimeNoticeCategory(NOTICE_CATEGORIES);
  api.console.setMissionCategory(MISSION_CATEGORIES.normal, MISSION_CATEGORIES.achievement);
  api.console.registerCampaignType(CAMPAIGN, (_req, res) => {
    api.counters.update('arena', CAMPAIGN, 1);
    res.ok();
  }, (_req, res) => {
    api.counters.update('arena', CAMPAIGN, 0);
    res.ok();
  });
  api.console.registerCustomQueryHandler('Player score', 'GET', 'player-score', ['name'], ['name', 'score', 'banned'], async (req, res) => {
    const name = String(req.fields.name);
    const p = await player(name, res);
    if (p) res.ok({ name, score: p.get('score'), banned: p.get('banned') });
  });
  api.console.registerCustomQueryHandler('Roster', 'GET', 'roster', [], null, async (_req, res) => {
    const roster = await objects.fetch('ArenaRoster', 'roster');
    res.ok({ names: [...(roster?.get('names') ?? [])] });
  });
}
