/* Missions (the daily one and the rest), notices, the double_clicks campaign, custom queries. */
#include <stdlib.h>
#include <string.h>

#include "arena_console.h"

typedef struct mission {
  const char *type, *category, *mission_id, *description;
  int level; /* measured on the character's level (1) or the player's score (0) */
  int64_t goal;
} mission;

static const mission MISSIONS[] = {
    {"normal", "tutorial", "first_click", "Click once", 0, 1},
    {"achievement", "clicks", "clicks_10", "Click 10 times", 0, 10},
    {"achievement", "clicks", "clicks_100", "Click 100 times", 0, 100},
    {"achievement", "clicks", "clicks_1000", "Click 1000 times", 0, 1000},
    {"achievement", "levels", "level_5", "Reach level 5", 1, 5},
    {"achievement", "levels", "level_10", "Reach level 10", 1, 10},
};

#define DAILY_GOAL 100

static int by_day(const void* a, const void* b) {
  const gsf_type_borrowed_str* x = (const gsf_type_borrowed_str*)a;
  const gsf_type_borrowed_str* y = (const gsf_type_borrowed_str*)b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->ptr, y->ptr, n);
  return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static void write_daily(gsf_mp_writer* w, gsf_type_borrowed_str date, int64_t clicks) {
  int completed = clicks >= DAILY_GOAL;
  gsf_mp_write_map(w, 9);
  gsf_mp_write_cstr(w, "mission_id");
  gsf_mp_write_cstr(w, "daily_clicks");
  gsf_mp_write_cstr(w, "description");
  gsf_mp_write_cstr(w, "Click 100 times");
  gsf_mp_write_cstr(w, "period");
  gsf_mp_write_cstr(w, "daily");
  gsf_mp_write_cstr(w, "date");
  gsf_mp_write_str(w, date.ptr, date.len);
  gsf_mp_write_cstr(w, "progress");
  gsf_mp_write_int(w, clicks < DAILY_GOAL ? clicks : DAILY_GOAL);
  gsf_mp_write_cstr(w, "goal");
  gsf_mp_write_int(w, DAILY_GOAL);
  gsf_mp_write_cstr(w, "completed");
  gsf_mp_write_bool(w, completed);
  gsf_mp_write_cstr(w, "rewarded");
  gsf_mp_write_bool(w, completed);
  gsf_mp_write_cstr(w, "rewards");
  gsf_mp_write_array(w, 1);
  gsf_mp_write_map(w, 2);
  gsf_mp_write_cstr(w, "item_id");
  gsf_mp_write_cstr(w, "medal");
  gsf_mp_write_cstr(w, "quantity");
  gsf_mp_write_int(w, 1);
}

/* The days on or after start_date that have clicks, in order, as daily records. */
static void answer_periodic(arena_req* r, gsf_type_borrowed_bytes owner) {
  gsf_type_borrowed_str period, start, *days = NULL;
  gsf_mp_reader map;
  gsf_mp_writer w;
  uint32_t n = 0, i, count = 0;
  arg_str(r, "period", &period);
  arg_str(r, "start_date", &start);
  gsf_mp_writer_init(&w);
  if (str_is(period, "daily") && owner.len > 0 && field(owner, "clicks_by_day", &map) && gsf_mp_read_map(&map, &n)) {
    days = (gsf_type_borrowed_str*)calloc(n + 1, sizeof *days);
    if (!days) abort();
    for (i = 0; i < n; i++) {
      gsf_type_borrowed_str day;
      gsf_mp_read_str(&map, &day);
      gsf_mp_skip(&map);
      if (by_day(&day, &start) >= 0) days[count++] = day;
    }
    qsort(days, count, sizeof *days, by_day);
    for (i = 0; i < count; i++) {
      gsf_mp_reader clicks;
      int64_t c = 0;
      char key[64];
      size_t len = days[i].len < sizeof key - 1 ? days[i].len : sizeof key - 1;
      memcpy(key, days[i].ptr, len);
      key[len] = '\0';
      if (field(owner, "clicks_by_day", &map)) {
        gsf_mp_reader_init(&clicks, map.p, (size_t)(map.end - map.p));
        if (gsf_mp_map_find(&clicks, key, &clicks)) gsf_mp_read_int(&clicks, &c);
      }
      write_daily(&w, days[i], c);
    }
    free(days);
  }
  answer_page(r, &w, count);
}

/* The missions of the request's type and category that match its search, with progress. */
static void answer_missions(arena_req* r, int64_t score) {
  gsf_type_borrowed_str type, category, condition, value;
  gsf_mp_reader completed_arg;
  gsf_mp_writer w;
  int completed_filter = -1, b;
  int64_t level = field_int(gsf_bytes(r->kept, r->kept_len), "level");
  size_t i;
  uint32_t count = 0;
  arg_str(r, "type", &type);
  arg_str(r, "category", &category);
  arg_str(r, "condition", &condition);
  arg_str(r, "value", &value);
  if (field(gsf_bytes(r->args, r->args_len), "is_completed", &completed_arg) && gsf_mp_read_bool(&completed_arg, &b)) completed_filter = b;
  gsf_mp_writer_init(&w);
  for (i = 0; i < sizeof MISSIONS / sizeof MISSIONS[0]; i++) {
    const mission* m = &MISSIONS[i];
    const char* searched = condition.len == 0 ? NULL : str_is(condition, "mission_id") ? m->mission_id : m->description;
    int64_t have = m->level ? level : score;
    int done = have >= m->goal;
    if (!str_is(type, m->type) || !str_is(category, m->category)) continue;
    if (searched) {
      size_t len = strlen(searched), k;
      int hit = value.len == 0;
      for (k = 0; !hit && k + value.len <= len; k++) hit = memcmp(searched + k, value.ptr, value.len) == 0;
      if (!hit) continue;
    }
    if (completed_filter >= 0 && done != completed_filter) continue;
    gsf_mp_write_map(&w, 6);
    gsf_mp_write_cstr(&w, "mission_id");
    gsf_mp_write_cstr(&w, m->mission_id);
    gsf_mp_write_cstr(&w, "description");
    gsf_mp_write_cstr(&w, m->description);
    gsf_mp_write_cstr(&w, "category");
    gsf_mp_write_cstr(&w, m->category);
    gsf_mp_write_cstr(&w, "progress");
    gsf_mp_write_int(&w, have < m->goal ? have : m->goal);
    gsf_mp_write_cstr(&w, "goal");
    gsf_mp_write_int(&w, m->goal);
    gsf_mp_write_cstr(&w, "completed");
    gsf_mp_write_bool(&w, done);
    count++;
  }
  answer_page(r, &w, count);
}

/* The character's owner: `number` 0 answers the periodic missions, 1 the others. */
static gsf_type_status on_mission_owner(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                        void* user_data) {
  arena_req* r = (arena_req*)user_data;
  (void)call, (void)id;
  if (r->number == 0) answer_periodic(r, found ? fields : gsf_bytes(NULL, 0));
  else answer_missions(r, found ? field_int(fields, "score") : 0);
  return GSF_STATUS_OK;
}

static gsf_type_status on_mission_character(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                            void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str owner = gsf_str(NULL);
  if (!found) {
    arg_str(r, "id", &id);
    fail(r, GSF_STATUS_NOT_FOUND, "no character '%.*s'", (int)id.len, id.ptr);
    return GSF_STATUS_OK;
  }
  if (!keep_bytes(r, fields)) abort();
  if (!field_str(fields, "player", &owner)) return on_mission_owner(call, 0, owner, fields, r);
  return fetch_id(call, r, "ArenaPlayer", owner, GSF_OBJECT_READ, on_mission_owner);
}

static gsf_type_status start_missions(gsf_type_call call, arena_req* r, int64_t number) {
  gsf_type_borrowed_str id;
  r->number = number;
  arg_str(r, "id", &id);
  return fetch_id(call, r, "ArenaCharacter", id, GSF_OBJECT_READ, on_mission_character);
}

gsf_type_status get_periodic_missions(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                      void* user_data) {
  arena_req* r = req_new(request, writer);
  (void)user_data;
  return r ? start_missions(call, r, 0) : GSF_STATUS_OK;
}

gsf_type_status get_missions(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_type_borrowed_str condition;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  arg_str(r, "condition", &condition);
  if (condition.len > 0 && !str_is(condition, "mission_id") && !str_is(condition, "description")) {
    fail(r, GSF_STATUS_INVALID_ARGUMENT, "unknown mission search condition '%.*s' (mission_id, description)", (int)condition.len,
         condition.ptr);
    return GSF_STATUS_OK;
  }
  return start_missions(call, r, 1);
}

gsf_type_status send_realtime_notice(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                     void* user_data) {
  gsf_type_borrowed_str category = gsf_str("");
  gsf_mp_reader args, value;
  gsf_type_status status;
  (void)user_data;
  /* The arguments are the notice itself: {category, color, messages}, pushed as `notice` to
     every session ("all") or to the category's group, as the managed console's arena.notice. */
  gsf_mp_reader_init(&args, request->args.ptr, request->args.len);
  if (gsf_mp_map_find(&args, "category", &value)) gsf_mp_read_str(&value, &category);
  if (category.len == 3 && memcmp(category.ptr, "all", 3) == 0) {
    status = host->broadcast(call, NULL, 0, gsf_str("notice"), request->args);
  } else {
    status = host->publish(call, category, gsf_str("notice"), request->args);
  }
  if (status != GSF_STATUS_OK) return status;
  return host->answer_void(writer);
}

static gsf_type_status campaign(gsf_type_api_writer writer, int running) {
  gsf_type_status status = host->counter_update(gsf_str("arena"), gsf_str("double_clicks"), running, 0);
  if (status != GSF_STATUS_OK) return status;
  return host->answer_void(writer);
}

gsf_type_status campaign_begin(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)call, (void)request, (void)user_data;
  return campaign(writer, 1);
}

gsf_type_status campaign_end(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  (void)call, (void)request, (void)user_data;
  return campaign(writer, 0);
}

static gsf_type_status on_query_player(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                       void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_type_borrowed_str name = kept_text(r);
  gsf_mp_writer w;
  (void)call, (void)id;
  if (!found) {
    fail(r, GSF_STATUS_NOT_FOUND, "no account '%.*s'", (int)name.len, name.ptr);
    return GSF_STATUS_OK;
  }
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, 3);
  gsf_mp_write_cstr(&w, "name");
  gsf_mp_write_str(&w, name.ptr, name.len);
  gsf_mp_write_cstr(&w, "score");
  write_field(&w, fields, "score");
  gsf_mp_write_cstr(&w, "banned");
  write_field(&w, fields, "banned");
  answer_json(r, &w);
  return GSF_STATUS_OK;
}

gsf_type_status query_player_score(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer,
                                   void* user_data) {
  arena_req* r = req_new(request, writer);
  gsf_mp_reader fields, name;
  gsf_type_borrowed_str s;
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  if (!field(gsf_bytes(r->args, r->args_len), "fields", &fields) || !gsf_mp_map_find(&fields, "name", &name) ||
      !gsf_mp_read_str(&name, &s) || !keep_text(r, s)) {
    fail(r, GSF_STATUS_INVALID_ARGUMENT, "name must be a string");
    return GSF_STATUS_OK;
  }
  return fetch_player(call, r, s, GSF_OBJECT_READ, on_query_player);
}

static gsf_type_status on_query_roster(gsf_type_call call, int32_t found, gsf_type_borrowed_str id, gsf_type_borrowed_bytes fields,
                                       void* user_data) {
  arena_req* r = (arena_req*)user_data;
  gsf_mp_writer w;
  (void)call, (void)id;
  gsf_mp_writer_init(&w);
  gsf_mp_write_map(&w, 1);
  gsf_mp_write_cstr(&w, "names");
  if (found) write_field(&w, fields, "names");
  else gsf_mp_write_array(&w, 0);
  answer_json(r, &w);
  return GSF_STATUS_OK;
}

gsf_type_status query_roster(gsf_type_call call, const gsf_type_api_request* request, gsf_type_api_writer writer, void* user_data) {
  arena_req* r = req_new(request, writer);
  (void)user_data;
  if (!r) return GSF_STATUS_OK;
  return fetch_id(call, r, "ArenaRoster", gsf_str("roster"), GSF_OBJECT_READ, on_query_roster);
}
