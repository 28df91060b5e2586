// ABI 1.2 host services of section "objects outside events, flags, callable counters and
// monitors" (see plugin_results.h): object_create and object_delete as requests of the event,
// object_read_cached through the addon's cache reader, object_transact as an event of its own,
// and the init-only declarations. Every callback runs inside Guard.
#include <cmath>
#include <cstring>
#include <string>

#include "../include/gsf_msgpack.h"
#include "json_msgpack.h"
#include "plugin_results.h"
#include "plugin_services.h"
#include "runtime.h"

namespace gsf {
namespace services {
// Shared with plugin_remote_services.cc.
CallState* RequestCall(gsf_type_call call, const char* what, const char* where, gsf_type_status* status);
bool OptionalValue(std::string_view bytes);
void WriteStr(gsf_mp_writer* w, std::string_view s);
std::string Written(gsf_mp_writer* w);
}  // namespace services

namespace {

using namespace services;

// The init call a declaration is made in (registration happens during init only).
CallState* InitCall(gsf_type_call init, const char* what, gsf_type_status* status) {
  CallState& s = ThisThreadCall();
  if (init.token == 0 || s.token.load(std::memory_order_relaxed) != init.token) {
    *status = GSF_STATUS_UNAVAILABLE;
    return nullptr;
  }
  if (!s.init) {
    *status = Note(&s, GSF_STATUS_UNAVAILABLE, std::string(what) + ": declarations are made during init only");
    return nullptr;
  }
  return &s;
}

gsf_type_status ObjectCreate(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id,
                             gsf_type_borrowed_bytes fields, gsf_on_result then, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = RequestCall(call, "object_create", "objects are created inside events", &status);
    if (!s) return status;
    if (type.ptr == nullptr || !ValidName(View(type))) return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_create") + ": type must be non-empty UTF-8");
    if (id.len != 0 && (id.ptr == nullptr || !ValidName(View(id)))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_create") + ": id must be UTF-8 (empty: a random UUID)");
    }
    if (fields.ptr == nullptr && fields.len != 0) return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_create") + ": fields is NULL but its length is not 0");
    if (fields.len != 0) {
      gsf_mp_reader r;
      gsf_mp_reader_init(&r, fields.ptr, fields.len);
      std::string error;
      if (gsf_mp_next_type(&r) != GSF_MP_MAP || !MsgpackValid(View(fields), &error)) {
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_create") + ": fields must be one msgpack map");
      }
    }
    gsf_mp_writer w;
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 3);
    WriteStr(&w, View(type));
    if (id.len == 0) gsf_mp_write_nil(&w); else WriteStr(&w, View(id));
    if (fields.len == 0) gsf_mp_write_nil(&w); else gsf_mp_write_raw(&w, fields);
    std::string args = Written(&w);
    uint64_t cont = then ? ProcessResultHost().AddContinuation(s->plugin, GSF_CALL_OBJECT_CREATE, then, user_data, drop, s->event.event_id, OriginOf(*s)) : 0;
    s->effects->ServiceRequest(kServiceCreate, cont, args);
    // Nothing to run later: the user data is released now, as the doc promises "exactly once".
    if (!then && drop) drop(user_data);
    return GSF_STATUS_OK;
  });
}

gsf_type_status ObjectDelete(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = RequestCall(call, "object_delete", "objects are deleted inside events", &status);
    if (!s) return status;
    if (type.ptr == nullptr || id.ptr == nullptr || !ValidName(View(type)) || !ValidName(View(id))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_delete") + ": type and id must be non-empty UTF-8");
    }
    gsf_mp_writer w;
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 2);
    WriteStr(&w, View(type));
    WriteStr(&w, View(id));
    s->effects->ServiceRequest(kServiceDelete, 0, Written(&w));
    return GSF_STATUS_OK;
  });
}

gsf_type_status ObjectReadCached(gsf_type_call call, gsf_type_borrowed_str type, gsf_type_borrowed_str id,
                                 gsf_type_host_bytes* fields) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status why;
    CallState* s = call.token != 0 ? LiveCall(call, &why) : nullptr;
    if (call.token != 0 && !s) return why;
    if (!fields) return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_read_cached") + ": fields is NULL");
    fields->ptr = nullptr;
    fields->len = 0;
    if (type.ptr == nullptr || id.ptr == nullptr || !ValidName(View(type)) || !ValidName(View(id))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_read_cached") + ": type and id must be non-empty UTF-8");
    }
    CachedObjectReader reader = GetCachedObjectReader();
    if (reader == nullptr) return Note(s, GSF_STATUS_UNAVAILABLE, Named(s, "object_read_cached") + ": no object cache in this process");
    std::string out;
    switch (reader(View(type), View(id), &out)) {
      case 0: {
        auto* copy = static_cast<uint8_t*>(std::malloc(out.size() ? out.size() : 1));
        if (!copy) return GSF_STATUS_RESOURCE_EXHAUSTED;
        std::memcpy(copy, out.data(), out.size());
        fields->ptr = copy;
        fields->len = out.size();
        return GSF_STATUS_OK;
      }
      case 1:
        return GSF_STATUS_NOT_FOUND;
      case 3:
        return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_read_cached") + ": no object type '" + std::string(View(type)) + "'");
      default:
        return GSF_STATUS_UNAVAILABLE;
    }
  });
}

gsf_type_status ObjectTransact(gsf_type_call call, const gsf_type_invoke_options* options, gsf_on_transaction fn,
                               gsf_on_result done, void* user_data, gsf_on_drop drop, uint64_t* event_id) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status why;
    CallState* s = call.token != 0 ? LiveCall(call, &why) : nullptr;
    if (call.token != 0 && !s) return why;
    if (!fn) return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_transact") + ": no transaction function");
    const NativePlugin* plugin = s ? s->plugin : nullptr;
    if (plugin == nullptr) {
      // A plugin's own thread: which plugin asks is unknown, so its copy's end cannot release it.
      return Note(s, GSF_STATUS_UNAVAILABLE, "object_transact: call it with a call of the plugin (init, a hook, an event)");
    }
    gsf_type_invoke_options o = gsf_invoke_options();
    if (options) {
      if (options->struct_size < 8) return Note(s, GSF_STATUS_INVALID_ARGUMENT, Named(s, "object_transact") + ": options.struct_size is too small");
      std::memcpy(&o, options, std::min<size_t>(options->struct_size, sizeof o));
    }
    std::string name = o.name.len == 0 ? "transact." + plugin->name : std::string(View(o.name));
    o.name = gsf_type_borrowed_str{name.data(), name.size()};
    Host().DeclareEvent(kNativeTransactEvent);
    ResultHost& host = ProcessResultHost();
    uint64_t key = host.AddTransaction(plugin, fn, done, user_data, drop);
    gsf_mp_writer w;
    gsf_mp_writer_init(&w);
    gsf_mp_write_array(&w, 2);
    gsf_mp_write_uint(&w, key);
    WriteStr(&w, plugin->name);
    std::string payload = Written(&w);
    uint64_t id = 0;
    gsf_type_status status = Invoke(call, gsf_type_borrowed_str{kNativeTransactEvent.data(), kNativeTransactEvent.size()},
                                    gsf_type_borrowed_bytes{reinterpret_cast<const uint8_t*>(payload.data()), payload.size()}, &o,
                                    &id);
    if (status != GSF_STATUS_OK) {
      host.ForgetTransaction(key);
      if (s) s->error = "object_transact: " + s->error;
      return status;
    }
    host.BindTransactionEvent(key, id);
    if (event_id) *event_id = id;
    return status;
  });
}

// A flag's default as a managed definition takes it (checkValue in src/config/manifest.ts).
bool FlagDefaultFits(uint32_t type, std::string_view bytes) {
  gsf_mp_reader r;
  gsf_mp_reader_init(&r, bytes.data(), bytes.size());
  switch (type) {
    case GSF_FLAG_BOOL: {
      int b;
      return gsf_mp_read_bool(&r, &b) && gsf_mp_at_end(&r);
    }
    case GSF_FLAG_INT32: {
      int64_t v;
      return gsf_mp_next_type(&r) == GSF_MP_INT && gsf_mp_read_int(&r, &v) && gsf_mp_at_end(&r) && v >= INT32_MIN && v <= INT32_MAX;
    }
    case GSF_FLAG_UINT64: {
      int64_t v;
      return gsf_mp_next_type(&r) == GSF_MP_INT && gsf_mp_read_int(&r, &v) && gsf_mp_at_end(&r) && v >= 0 &&
             v <= 9007199254740991LL;
    }
    case GSF_FLAG_DOUBLE: {
      double v;
      int t = gsf_mp_next_type(&r);
      return (t == GSF_MP_INT || t == GSF_MP_FLOAT) && gsf_mp_read_double(&r, &v) && gsf_mp_at_end(&r) && std::isfinite(v);
    }
    case GSF_FLAG_STRING: {
      gsf_type_borrowed_str str;
      return gsf_mp_read_str(&r, &str) && gsf_mp_at_end(&r) && (str.len == 0 || ValidName(View(str)));
    }
    default:
      return false;
  }
}

const char* const kFlagTypes[] = {"bool", "int32", "uint64", "double", "string"};

gsf_type_status FlagDefine(gsf_type_call init, gsf_type_borrowed_str name, uint32_t type, gsf_type_borrowed_bytes default_value,
                           gsf_type_borrowed_str description) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = InitCall(init, "flag_define", &status);
    if (!s) return status;
    std::string what = Named(s, "flag_define");
    if (name.ptr == nullptr || !ValidName(View(name)) || View(name).find('\0') != std::string_view::npos) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": the name must be non-empty UTF-8");
    }
    what += " '" + std::string(View(name)) + "'";
    if (type > GSF_FLAG_STRING) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": type must be GSF_FLAG_BOOL, _INT32, _UINT64, _DOUBLE or _STRING");
    if (description.len != 0 && (description.ptr == nullptr || !ValidName(View(description)))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": the description must be UTF-8");
    }
    if (default_value.ptr == nullptr || !FlagDefaultFits(type, View(default_value))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": the default must be one msgpack " + kFlagTypes[type] + " value" +
                                                      (type == GSF_FLAG_INT32 || type == GSF_FLAG_UINT64 ? " in range" : ""));
    }
    NativeDeclarations& d = ProcessResultHost().Declarations(s->plugin);
    for (const NativeDeclarations::Flag& f : d.flags) {
      if (f.name == View(name)) return Note(s, GSF_STATUS_CONFLICT, what + ": defined twice");
    }
    d.flags.push_back(NativeDeclarations::Flag{std::string(View(name)), std::string(View(description)), std::string(View(default_value)), type});
    return GSF_STATUS_OK;
  });
}

gsf_type_status CounterRegisterCallable(gsf_type_call init, gsf_type_borrowed_str category, gsf_type_borrowed_str name,
                                        gsf_type_borrowed_str description, gsf_on_counter fn, void* user_data, gsf_on_drop drop) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = InitCall(init, "counter_register_callable", &status);
    if (!s) return status;
    std::string what = Named(s, "counter_register_callable");
    if (!CounterNames(category, name)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": category and name must be non-empty UTF-8");
    if (description.len != 0 && (description.ptr == nullptr || !ValidName(View(description)))) {
      return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": the description must be UTF-8");
    }
    if (!fn) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": no counter function");
    if (ProcessResultHost().AddCallable(s->plugin, View(category), View(name), View(description), fn, user_data, drop) == UINT32_MAX) {
      return Note(s, GSF_STATUS_RESOURCE_EXHAUSTED, what + ": more than " + std::to_string(ResultHost::kMaxCallables) + " native callable counters in the process");
    }
    return GSF_STATUS_OK;
  });
}

gsf_type_status CounterMonitor(gsf_type_call init, gsf_type_borrowed_str category, gsf_type_borrowed_str name, double threshold) {
  return Guard([&]() -> gsf_type_status {
    gsf_type_status status;
    CallState* s = InitCall(init, "counter_monitor", &status);
    if (!s) return status;
    std::string what = Named(s, "counter_monitor");
    if (!CounterNames(category, name)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": category and name must be non-empty UTF-8");
    if (!std::isfinite(threshold)) return Note(s, GSF_STATUS_INVALID_ARGUMENT, what + ": the threshold must be a finite number");
    ProcessResultHost().Declarations(s->plugin).monitors.push_back(
        NativeDeclarations::Monitor{std::string(View(category)), std::string(View(name)), threshold});
    return GSF_STATUS_OK;
  });
}

}  // namespace

void FillRemoteServices(gsf_type_host_api* api);

void FillResultServices(gsf_type_host_api* api) {
  api->object_create = ObjectCreate;
  api->object_delete = ObjectDelete;
  api->object_read_cached = ObjectReadCached;
  api->object_transact = ObjectTransact;
  api->flag_define = FlagDefine;
  api->counter_register_callable = CounterRegisterCallable;
  api->counter_monitor = CounterMonitor;
  FillRemoteServices(api);
}

}  // namespace gsf
