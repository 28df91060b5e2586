/*
 * arena-console-native: the arena's operations-console handlers in C (ABI 1.1). They serve when
 * the manifest's DeployApiService has `deploy_api_service_use_managed: false`; the managed half
 * in plugins/arena/console.ts serves otherwise. Both answer every request alike.
 */
#include "arena_console.h"

const gsf_type_host_api* host;

static gsf_type_status init(const gsf_type_host_api* h, gsf_type_call call) {
  gsf_type_console_handlers t = gsf_console_handlers();
  gsf_type_borrowed_str account[] = {gsf_str("score")};
  gsf_type_borrowed_str character[] = {gsf_str("nickname"), gsf_str("level")};
  gsf_type_borrowed_str gift_ids[] = {gsf_str("gem"), gsf_str("potion"), gsf_str("sword")};
  gsf_type_borrowed_str gift_names[] = {gsf_str("Gem"), gsf_str("Potion"), gsf_str("Sword")};
  gsf_type_borrowed_str notices[] = {gsf_str("lobby")};
  gsf_type_borrowed_str normal[] = {gsf_str("tutorial")};
  gsf_type_borrowed_str achievement[] = {gsf_str("clicks"), gsf_str("levels")};
  gsf_type_borrowed_str query_in[] = {gsf_str("name")};
  gsf_type_borrowed_str query_out[] = {gsf_str("name"), gsf_str("score"), gsf_str("banned")};
  gsf_type_status s;
  host = h;
  if (h->abi_minor < 1) {
    h->set_error(call, gsf_str("needs gsf's plugin ABI 1.1 (console handlers)"));
    return GSF_STATUS_UNAVAILABLE;
  }
  t.get_user_search_conditions = get_user_search_conditions;
  t.search_users = search_users;
  t.get_user = get_user;
  t.update_user = update_user;
  t.is_logged_in = is_logged_in;
  t.force_logout = force_logout;
  t.get_user_banned = get_user_banned;
  t.ban_user = ban_user;
  t.unban_user = unban_user;
  t.get_characters = get_characters;
  t.get_character = get_character;
  t.update_character = update_character;
  t.get_character_inventory_info = get_character_inventory_info;
  t.get_inventory = get_inventory;
  t.delete_inventory_item = delete_inventory_items;
  t.delete_multiple_inventory_items = delete_inventory_items;
  t.give_gift = give_gift;
  t.give_gift_to_all = give_gift_to_all;
  t.refund = refund;
  t.send_realtime_notice = send_realtime_notice;
  t.get_character_periodic_mission_status = get_periodic_missions;
  t.get_character_mission_status = get_missions;
  if ((s = h->console_register_handlers(call, &t)) != GSF_STATUS_OK) return s;
  if ((s = h->console_set_editable_fields(call, GSF_CONSOLE_ACCOUNT, account, 1)) != GSF_STATUS_OK) return s;
  if ((s = h->console_set_editable_fields(call, GSF_CONSOLE_CHARACTER, character, 2)) != GSF_STATUS_OK) return s;
  if ((s = h->console_set_giftable_items(call, gift_ids, gift_names, 3)) != GSF_STATUS_OK) return s;
  if ((s = h->console_set_notice_categories(call, notices, 1)) != GSF_STATUS_OK) return s;
  if ((s = h->console_set_mission_categories(call, normal, 1, achievement, 2)) != GSF_STATUS_OK) return s;
  if ((s = h->console_register_campaign_type(call, gsf_str("double_clicks"), campaign_begin, campaign_end, NULL)) != GSF_STATUS_OK) return s;
  if ((s = h->console_register_custom_query(call, gsf_str("Player score"), gsf_str("GET"), gsf_str("player-score"), query_in, 1, query_out,
                                            3, query_player_score, NULL)) != GSF_STATUS_OK) {
    return s;
  }
  return h->console_register_custom_query(call, gsf_str("Roster"), gsf_str("GET"), gsf_str("roster"), NULL, 0, NULL, 0, query_roster, NULL);
}

GSF_PLUGIN_DEFINE("arena-console-native", "1.0.0", init);
