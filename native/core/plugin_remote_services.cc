// ABI 1.2 host services of section "cluster and authenticator calls" (see plugin_results.h):
// each is a request of the running event, carried out by JavaScript through the managed
// api.cluster and api.auth; the answer runs the call's gsf_on_result continuation in the same
// event. Every callback runs inside Guard.
#include <cstring>
#include <string>

#include "../include/gsf_msgpack.h"
#include "event_tags.h"
#include "json_msgpack.h"
#include "plugin_results.h"
#include "plugin_services.h"

namespace gsf {
namespace services {

// The live event call a request is made in (init, lifecycle hooks and plugin threads have none).
CallState* RequestCall(gsf_type_call call, const char* what, const char* where, gsf_type_status* status) {
  CallState* s = LiveCall(call, status);
  if (!s) return nullptr;
  if (s->init || !s->effects || s->event.event_id == 0) {
    *status = Note(s, GSF_STATUS_UNAVAILABLE,
                   std::string(what) + " of plugin '" + (s->plugin ? s->plugin->name : std::string("?")) + "': " + where);
    return nullptr;
  }
  return s;
}

// Empty, or one valid msgpack value.
bool OptionalValue(std::string_view bytes) {
  std::string error;
  return bytes.empty() || MsgpackValid(bytes, &error);
}

void WriteStr(gsf_mp_writer* w, std::string_view s) { gsf_mp_write_str(w, s.data(), s.size()); }

std::string Written(gsf_mp_writer* w) {
  if (!gsf_mp_writer_ok(w)) {
    gsf_mp_writer_free(w);
    throw std::bad_alloc();
  }
  gsf_type_borrowed_bytes b = gsf_mp_writer_bytes(w);
  std::string out(reinterpret_cast<const char*>(b.ptr), b.len);
  gsf_mp_writer_free(w);
  return out;
}

}  // namespace services

namespace {

using namespace services;

bool Bytes(gsf_type_borrowed_bytes b) { return b.ptr != nullptr || b.len == 0; }

gsf_type_status Request(CallState* s, uint32_t service, uint32_t op, const std::string& args, gsf_on_result then, void* user_data,
                        gsf_on_drop drop) {
  uint64_t cont = then ? ProcessResultHost().AddContinuation(s->plugin, op, then, user_data, drop, s->event.event_id, OriginOf(*s)) : 0;
  s->effects->ServiceRequest(service, cont, args);
  if (!then && drop) drop(user_data);  // nothing runs later: released now
  return GSF_STATUS_OK;
}

gsf_type_status ClusterInvoke(gsf_type_call call, gsf_type_borrowed_str server_id, gsf_type_borrowed_str event,
                              gsf_type_borrowed_bytes payload, const gsf_type_invoke_options* options, gsf_on_result then,
                              void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = RequestCall(call, "cluster_invoke", "cluster calls are made inside events", &status);
    if (!s) return status;
    std::string what = Named(s, "cluster_invoke");
    if (!Text(server_id)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": server id must be non-empty UTF-8");
    if (!Text(event)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": event must be non-empty UTF-8");
    if (!Bytes(payload) || !OptionalValue(View(payload))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": payload must be empty or one msgpack value");
    }
    gsf_type_invoke_options o = gsf_invoke_options();
    if (options) {
      if (options->struct_size < 8) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": options.struct_size is too small");
      std::memcpy(&o, options, std::min<size_t>(options->struct_size, sizeof o));
    }
    bool has_tag = true;
    uint64_t tag = 0;
    switch (o.tag_mode) {
      case GSF_TAG_MODE_DEFAULT:
      case GSF_TAG_MODE_RANDOM:
        has_tag = false;  // a random tag there (SPEC 6.2.4c)
        break;
      case GSF_TAG_MODE_VALUE:
        if (!IsValidTag(o.tag)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": tag must be below 2^53");
        tag = o.tag;
        break;
      case GSF_TAG_MODE_NAMED:
        if (!TagName(o.tag_name)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": options.tag_name must be UTF-8 (NULL only with length 0)");
        tag = NamedTag(View(o.tag_name));
        break;
      default:
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": unknown tag mode " + std::to_string(o.tag_mode));
    }
    if (o.name.len != 0 && (o.name.ptr == nullptr || !ValidName(View(o.name)))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": options.name is not valid UTF-8");
    }
    gsf_mp_writer w;
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 5);
    WriteStr(&w, View(server_id));
    WriteStr(&w, View(event));
    if (payload.len == 0) gsf_mp_write_nil(&w); else gsf_mp_write_raw(&w, payload);
    if (has_tag) gsf_mp_write_uint(&w, tag); else gsf_mp_write_nil(&w);
    if (o.name.len == 0) gsf_mp_write_nil(&w); else WriteStr(&w, View(o.name));
    return Request(s, kServiceClusterInvoke, GSF_CALL_CLUSTER_INVOKE, Written(&w), then, user_data, drop);
  });
}

gsf_type_status ClusterSendToAccount(gsf_type_call call, gsf_type_borrowed_str account, gsf_type_borrowed_str type,
                                     gsf_type_borrowed_bytes body, gsf_on_result then, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = RequestCall(call, "cluster_send_to_account", "cluster calls are made inside events", &status);
    if (!s) return status;
    std::string what = Named(s, "cluster_send_to_account");
    if (!Text(account)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": account id must be non-empty UTF-8");
    if (!Text(type)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": type must be non-empty UTF-8");
    if (!Bytes(body) || !OptionalValue(View(body))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": body must be empty or one msgpack value");
    gsf_mp_writer w;
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 3);
    WriteStr(&w, View(account));
    WriteStr(&w, View(type));
    if (body.len == 0) gsf_mp_write_nil(&w); else gsf_mp_write_raw(&w, body);
    return Request(s, kServiceSendToAccount, GSF_CALL_CLUSTER_SEND_TO_ACCOUNT, Written(&w), then, user_data, drop);
  });
}

gsf_type_status AuthCall(gsf_type_call call, bool personal, gsf_type_borrowed_bytes request, gsf_on_result then, void* user_data,
                         gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    const char* name = personal ? "auth_personal_info" : "auth_authenticate";
    gsf_type_status status;
    CallState* s = RequestCall(call, name, "authenticator calls are made inside events", &status);
    if (!s) return status;
    std::string what = Named(s, name);
    gsf_mp_reader r;
    gsf_mp_reader_init(&r, request.ptr, request.ptr ? request.len : 0);
    if (request.ptr == nullptr || gsf_mp_next_type(&r) != GSF_MP_MAP || !OptionalValue(View(request))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": the request must be one msgpack map");
    }
    if (!then) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": no continuation");
    gsf_mp_writer w;
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 1);
    gsf_mp_write_raw(&w, request);
    return Request(s, personal ? kServicePersonalInfo : kServiceAuthenticate, personal ? GSF_CALL_PERSONAL_INFO : GSF_CALL_AUTHENTICATE,
                   Written(&w), then, user_data, drop);
  });
}

gsf_type_status AuthAuthenticate(gsf_type_call call, gsf_type_borrowed_bytes request, gsf_on_result then, void* user_data,
                                 gsf_on_drop drop) {
  return AuthCall(call, false, request, then, user_data, drop);
}

gsf_type_status AuthPersonalInfo(gsf_type_call call, gsf_type_borrowed_bytes request, gsf_on_result then, void* user_data,
                                 gsf_on_drop drop) {
  return AuthCall(call, true, request, then, user_data, drop);
}

}  // namespace

void FillRemoteServices(gsf_type_host_api* api) {
  api->cluster_invoke = ClusterInvoke;
  api->cluster_send_to_account = ClusterSendToAccount;
  api->auth_authenticate = AuthAuthenticate;
  api->auth_personal_info = AuthPersonalInfo;
}

}  // namespace gsf
