// Host services of ABI 1.1 for objects: an event's fetches and sets become object requests in
// its call's effects; the caller (src/plugins/native-objects.ts) carries them out on the event's
// transaction and runs each fetch's continuation with the object, in the same event.
#include <string>

#include "../include/gsf_msgpack.h"
#include "json_msgpack.h"
#include "plugin_api.h"
#include "plugin_services.h"

namespace gsf {
namespace {

using namespace services;

// The live event call an object service acts for (init and plugin threads have no event).
CallState* EventCall(gsf_type_call call, const char* what, gsf_type_status* status) {
  CallState* s = LiveCall(call, status);
  if (!s) return nullptr;
  if (s->init || !s->effects || s->event.event_id == 0) {
    *status = Note(s, GSF_STATUS_UNAVAILABLE, std::string(what) + ": objects are read and changed inside events");
    return nullptr;
  }
  return s;
}

bool CheckMode(CallState* s, const char* what, uint32_t mode, gsf_type_status* status) {
  if (mode == GSF_OBJECT_READ || mode == GSF_OBJECT_WRITE) return true;
  *status = Note(s, GSF_STATUS_INVALID_ARGUMENT, std::string(what) + ": mode must be GSF_OBJECT_READ or GSF_OBJECT_WRITE");
  return false;
}

gsf_type_status ObjectFetchV2(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id, uint32_t mode,
                              gsf_on_object then, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = EventCall(call, "object_fetch", &status);
    if (!s) return status;
    if (!ValidName(View(type)) || !ValidName(View(id))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_fetch: type and id must be non-empty UTF-8");
    if (!CheckMode(s, "object_fetch", mode, &status)) return status;
    if (!then) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_fetch: no continuation");
    uint64_t cont = ProcessApiHost().AddContinuation(s->plugin, then, user_data, s->event.event_id, drop, OriginOf(*s));
    s->effects->ObjectRequest(kObjectOpFetch, cont, View(type), View(id), std::string_view(), mode);
    return GSF_STATUS_OK;
  });
}

gsf_type_status ObjectFetchByV2(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str field,
                                gsf_type_borrowed_bytes key, uint32_t mode, gsf_on_object then, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = EventCall(call, "object_fetch_by", &status);
    if (!s) return status;
    if (!ValidName(View(type)) || !ValidName(View(field))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_fetch_by: type and field must be non-empty UTF-8");
    }
    std::string error;
    if (View(key).empty() || !MsgpackValid(View(key), &error)) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_fetch_by: the key must be one msgpack value");
    }
    if (!CheckMode(s, "object_fetch_by", mode, &status)) return status;
    if (!then) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_fetch_by: no continuation");
    uint64_t cont = ProcessApiHost().AddContinuation(s->plugin, then, user_data, s->event.event_id, drop, OriginOf(*s));
    s->effects->ObjectRequest(kObjectOpFetchBy, cont, View(type), View(field), View(key), mode);
    return GSF_STATUS_OK;
  });
}

gsf_type_status ObjectFetch(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id, uint32_t mode,
                            gsf_on_object then, void* user_data) {
  return ObjectFetchV2(call, type, id, mode, then, user_data, nullptr);
}

gsf_type_status ObjectFetchBy(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str field,
                              gsf_type_borrowed_bytes key, uint32_t mode, gsf_on_object then, void* user_data) {
  return ObjectFetchByV2(call, type, field, key, mode, then, user_data, nullptr);
}

gsf_type_status ObjectSet(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id,
                          gsf_type_borrowed_bytes fields) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = EventCall(call, "object_set", &status);
    if (!s) return status;
    if (!ValidName(View(type)) || !ValidName(View(id))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_set: type and id must be non-empty UTF-8");
    std::string error;
    gsf_mp_reader r;
    gsf_mp_reader_init(&r, fields.ptr, fields.ptr ? fields.len : 0);
    if (gsf_mp_next_type(&r) != GSF_MP_MAP || !MsgpackValid(View(fields), &error)) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, "object_set: the fields must be one msgpack map");
    }
    s->effects->ObjectRequest(kObjectOpSet, 0, View(type), View(id), View(fields), GSF_OBJECT_WRITE);
    return GSF_STATUS_OK;
  });
}

}  // namespace

void FillObjectServices(gsf_type_host_api* api) {
  api->object_fetch = ObjectFetch;
  api->object_fetch_by = ObjectFetchBy;
  api->object_set = ObjectSet;
  api->object_fetch_v2 = ObjectFetchV2;
  api->object_fetch_by_v2 = ObjectFetchByV2;
}

}  // namespace gsf
