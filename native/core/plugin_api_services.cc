// Host services of ABI 1.1: REST routes, console registrations (init only) and response
// writers (any thread, any time). Each body runs inside Guard: nothing unwinds into C.
#include <cstddef>
#include <string>

#include "../include/gsf_msgpack.h"
#include "json_msgpack.h"
#include "plugin_api.h"
#include "plugin_services.h"

namespace gsf {
namespace {

using namespace services;

// The init call registering, or null (registration outside init is GSF_STATUS_UNAVAILABLE).
CallState* InitCall(gsf_type_call init) {
  CallState& s = ThisThreadCall();
  if (init.token == 0 || s.token.load(std::memory_order_relaxed) != init.token || !s.init) return nullptr;
  return &s;
}

// Copies `count` names; false (with the failure noted) when one is not non-empty UTF-8.
bool Names(CallState* s, const char* what, const gsf_type_borrowed_str* items, size_t count, std::vector<std::string>* out) {
  if (count > 0 && !items) {
    Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": no array given for " + std::to_string(count) + " names");
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    std::string_view n = View(items[i]);
    if (!ValidName(n)) {
      Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": name " + std::to_string(i) + " must be non-empty UTF-8");
      return false;
    }
    out->emplace_back(n);
  }
  return true;
}

uint32_t Entry(CallState* s, const char* what, gsf_on_api fn, void* user_data, gsf_type_status* status) {
  uint32_t index = ProcessApiHost().AddEntry(s->plugin, fn, user_data);
  if (index == UINT32_MAX) *status = Note(s, GSF_STATUS_RESOURCE_EXHAUSTED, std::string(what) + ": too many native API handlers in the process");
  return index;
}

gsf_type_status RegisterRoute(gsf_type_call init, gsf_type_borrowed_str method, gsf_type_borrowed_str path,
                              gsf_type_borrowed_str event_name, gsf_on_api fn, void* user_data) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    std::string_view m = View(method), p = View(path);
    if (m != "GET" && m != "POST" && m != "PUT" && m != "DELETE" && m != "PATCH") {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "register_route: method must be GET, POST, PUT, DELETE or PATCH");
    }
    if (!ValidName(p) || p[0] != '/') return Note(s, GSF_STATUS_INVALID_ARGUMENT, "register_route: the path must start with '/'");
    if (!fn) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "register_route: no handler function");
    gsf_type_status status = GSF_STATUS_OK;
    uint32_t entry = Entry(s, "register_route", fn, user_data, &status);
    if (status != GSF_STATUS_OK) return status;
    ProcessApiHost().Registrations(s->plugin).routes.push_back({std::string(m), std::string(p), std::string(View(event_name)), entry});
    return GSF_STATUS_OK;
  });
}

constexpr size_t kConsoleHooks = 22;

gsf_type_status RegisterConsoleHandlers(gsf_type_call init, const gsf_type_console_handlers* handlers) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    constexpr size_t first = offsetof(gsf_type_console_handlers, get_user_search_conditions);
    if (!handlers || handlers->struct_size < first) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "console_register_handlers: give a table made with gsf_console_handlers()");
    }
    // Hooks past the plugin's struct_size do not exist in its build; hooks past gsf's are unknown here.
    size_t count = (handlers->struct_size - first) / sizeof(gsf_on_api);
    if (count > kConsoleHooks) count = kConsoleHooks;
    const auto* hooks = reinterpret_cast<const gsf_on_api*>(reinterpret_cast<const unsigned char*>(handlers) + first);
    ApiRegistrations& reg = ProcessApiHost().Registrations(s->plugin);
    for (size_t i = 0; i < count; ++i) {
      if (!hooks[i]) continue;
      gsf_type_status status = GSF_STATUS_OK;
      uint32_t entry = Entry(s, "console_register_handlers", hooks[i], handlers->user_data, &status);
      if (status != GSF_STATUS_OK) return status;
      reg.operations.emplace_back(static_cast<uint32_t>(i + 1), entry);
    }
    return GSF_STATUS_OK;
  });
}

gsf_type_status SetEditableFields(gsf_type_call init, uint32_t target, const gsf_type_borrowed_str* fields, size_t count) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    if (target != GSF_CONSOLE_ACCOUNT && target != GSF_CONSOLE_CHARACTER) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "console_set_editable_fields: target must be GSF_CONSOLE_ACCOUNT or GSF_CONSOLE_CHARACTER");
    }
    ApiRegistrations& reg = ProcessApiHost().Registrations(s->plugin);
    bool ok = Names(s, "console_set_editable_fields", fields, count,
                    target == GSF_CONSOLE_ACCOUNT ? &reg.editable_account : &reg.editable_character);
    return ok ? GSF_STATUS_OK : GSF_STATUS_INVALID_ARGUMENT;
  });
}

gsf_type_status SetGiftableItems(gsf_type_call init, const gsf_type_borrowed_str* ids, const gsf_type_borrowed_str* names,
                                 size_t count) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    std::vector<std::string> item_ids;
    if (!Names(s, "console_set_giftable_items", ids, count, &item_ids)) return GSF_STATUS_INVALID_ARGUMENT;
    if (count > 0 && !names) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "console_set_giftable_items: no names given");
    ApiRegistrations& reg = ProcessApiHost().Registrations(s->plugin);
    for (size_t i = 0; i < count; ++i) reg.giftable.emplace_back(item_ids[i], std::string(View(names[i])));
    return GSF_STATUS_OK;
  });
}

gsf_type_status SetNoticeCategories(gsf_type_call init, const gsf_type_borrowed_str* categories, size_t count) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    bool ok = Names(s, "console_set_notice_categories", categories, count, &ProcessApiHost().Registrations(s->plugin).notice_categories);
    return ok ? GSF_STATUS_OK : GSF_STATUS_INVALID_ARGUMENT;
  });
}

gsf_type_status SetMissionCategories(gsf_type_call init, const gsf_type_borrowed_str* normal, size_t normal_count,
                                     const gsf_type_borrowed_str* achievement, size_t achievement_count) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    ApiRegistrations& reg = ProcessApiHost().Registrations(s->plugin);
    bool ok = Names(s, "console_set_mission_categories", normal, normal_count, &reg.mission_normal) &&
              Names(s, "console_set_mission_categories", achievement, achievement_count, &reg.mission_achievement);
    return ok ? GSF_STATUS_OK : GSF_STATUS_INVALID_ARGUMENT;
  });
}

gsf_type_status RegisterCampaignType(gsf_type_call init, gsf_type_borrowed_str type, gsf_on_api begin, gsf_on_api end,
                                     void* user_data) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    if (!ValidName(View(type))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "console_register_campaign_type: the type must be non-empty UTF-8");
    if (!begin || !end) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "console_register_campaign_type: give both callbacks");
    gsf_type_status status = GSF_STATUS_OK;
    uint32_t b = Entry(s, "console_register_campaign_type", begin, user_data, &status);
    if (status != GSF_STATUS_OK) return status;
    uint32_t e = Entry(s, "console_register_campaign_type", end, user_data, &status);
    if (status != GSF_STATUS_OK) return status;
    ProcessApiHost().Registrations(s->plugin).campaigns.push_back({std::string(View(type)), b, e});
    return GSF_STATUS_OK;
  });
}

gsf_type_status RegisterCustomQuery(gsf_type_call init, gsf_type_borrowed_str name, gsf_type_borrowed_str method,
                                    gsf_type_borrowed_str uri, const gsf_type_borrowed_str* request_fields, size_t request_count,
                                    const gsf_type_borrowed_str* response_fields, size_t response_count, gsf_on_api fn,
                                    void* user_data) {
  return Guard([&]() -> gsf_type_status {
    CallState* s = InitCall(init);
    if (!s) return GSF_STATUS_UNAVAILABLE;
    const char* what = "console_register_custom_query";
    std::string_view m = View(method);
    if (!ValidName(View(name))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": the name must be non-empty UTF-8");
    if (m != "GET" && m != "POST" && m != "PUT") return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": method must be GET, POST or PUT");
    if (!ValidName(View(uri))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": the uri must be non-empty UTF-8");
    if (!fn) return Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": no handler function");
    ApiRegistrations::Query q{std::string(View(name)), std::string(m), std::string(View(uri)), {}, {}, response_fields != nullptr, 0};
    if (!Names(s, what, request_fields, request_count, &q.request)) return GSF_STATUS_INVALID_ARGUMENT;
    if (response_fields && !Names(s, what, response_fields, response_count, &q.response)) return GSF_STATUS_INVALID_ARGUMENT;
    gsf_type_status status = GSF_STATUS_OK;
    q.entry = Entry(s, what, fn, user_data, &status);
    if (status != GSF_STATUS_OK) return status;
    ProcessApiHost().Registrations(s->plugin).queries.push_back(std::move(q));
    return GSF_STATUS_OK;
  });
}

// ---- response writers ----

// Notes why a writer refused on this thread's running call, if one runs (writers may be used anywhere).
gsf_type_status NoteHere(gsf_type_status status, const std::string& message) {
  CallState& s = ThisThreadCall();
  return Note(s.token.load(std::memory_order_relaxed) != 0 ? &s : nullptr, status, message);
}

// The writer's answer; INVALID_ARGUMENT (noted) when the kind does not fit the request.
gsf_type_status Give(gsf_type_api_writer w, uint32_t kind, int32_t status, std::string body, bool has_body, const char* what) {
  gsf_type_status r = ProcessApiHost().Answer(w, kind, status, std::move(body), has_body);
  if (r == GSF_STATUS_INVALID_ARGUMENT) return NoteHere(r, std::string(what) + ": this request does not answer that kind");
  return r;
}

gsf_type_status AnswerVoid(gsf_type_api_writer w) {
  return Guard([&] { return Give(w, GSF_ANSWER_VOID, GSF_STATUS_OK, std::string(), false, "answer_void"); });
}

gsf_type_status AnswerBool(gsf_type_api_writer w, int32_t value) {
  return Guard([&] { return Give(w, GSF_ANSWER_BOOL, GSF_STATUS_OK, value ? "true" : "false", true, "answer_bool"); });
}

gsf_type_status AnswerJson(gsf_type_api_writer w, gsf_type_borrowed_bytes value) {
  return Guard([&]() -> gsf_type_status {
    gsf_mp_reader r;
    gsf_mp_reader_init(&r, value.ptr, value.ptr ? value.len : 0);
    int type = gsf_mp_next_type(&r);
    if (type != GSF_MP_MAP && type != GSF_MP_ARRAY) return NoteHere(GSF_STATUS_INVALID_ARGUMENT, "answer_json: the value must be a msgpack map or array");
    std::string json, error;
    if (!MsgpackToJson(View(value), &json, &error)) return NoteHere(GSF_STATUS_INVALID_ARGUMENT, "answer_json: " + error);
    return Give(w, type == GSF_MP_MAP ? GSF_ANSWER_JSON_OBJECT : GSF_ANSWER_JSON_ARRAY, GSF_STATUS_OK, std::move(json), true, "answer_json");
  });
}

gsf_type_status AnswerString(gsf_type_api_writer w, gsf_type_borrowed_str value) {
  return Guard([&]() -> gsf_type_status {
    std::string_view v = View(value);
    if (!v.empty() && !ValidName(v)) return NoteHere(GSF_STATUS_INVALID_ARGUMENT, "answer_string: the value is not UTF-8");
    std::string json;
    AppendJsonString(v, &json);
    return Give(w, GSF_ANSWER_STRING, GSF_STATUS_OK, std::move(json), true, "answer_string");
  });
}

gsf_type_status AnswerStringArray(gsf_type_api_writer w, const gsf_type_borrowed_str* items, size_t count) {
  return Guard([&]() -> gsf_type_status {
    if (count > 0 && !items) return GSF_STATUS_INVALID_ARGUMENT;
    std::string json = "[";
    for (size_t i = 0; i < count; ++i) {
      std::string_view v = View(items[i]);
      if (!v.empty() && !ValidName(v)) return NoteHere(GSF_STATUS_INVALID_ARGUMENT, "answer_string_array: an item is not UTF-8");
      if (i > 0) json.push_back(',');
      AppendJsonString(v, &json);
    }
    json.push_back(']');
    return Give(w, GSF_ANSWER_STRING_ARRAY, GSF_STATUS_OK, std::move(json), true, "answer_string_array");
  });
}

gsf_type_status AnswerError(gsf_type_api_writer w, gsf_type_status status, gsf_type_borrowed_str message) {
  return Guard([&]() -> gsf_type_status {
    if (status <= GSF_STATUS_OK || status > GSF_STATUS_EXPIRED) {
      return NoteHere(GSF_STATUS_INVALID_ARGUMENT, "answer_error: the status must be a failure (INVALID_ARGUMENT to EXPIRED)");
    }
    return Give(w, GSF_ANSWER_ANY, status, std::string(View(message)), false, "answer_error");
  });
}

}  // namespace

void FillObjectServices(gsf_type_host_api* api);  // plugin_objects.cc

void FillApiServices(gsf_type_host_api* api) {
  api->register_route = RegisterRoute;
  api->console_register_handlers = RegisterConsoleHandlers;
  api->console_set_editable_fields = SetEditableFields;
  api->console_set_giftable_items = SetGiftableItems;
  api->console_set_notice_categories = SetNoticeCategories;
  api->console_set_mission_categories = SetMissionCategories;
  api->console_register_campaign_type = RegisterCampaignType;
  api->console_register_custom_query = RegisterCustomQuery;
  api->answer_void = AnswerVoid;
  api->answer_bool = AnswerBool;
  api->answer_json = AnswerJson;
  api->answer_string = AnswerString;
  api->answer_string_array = AnswerStringArray;
  api->answer_error = AnswerError;
  FillObjectServices(api);
}

}  // namespace gsf
