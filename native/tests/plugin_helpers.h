// Shared helpers of the plugin host tests: fixture paths, an effects collector, the queue.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../core/plugin_host.h"
#include "../core/runtime.h"

/** A plugin built by native/tests/CMakeLists.txt. */
inline std::string FixturePath(const std::string& name) { return std::string(GSF_FIXTURE_DIR) + "/" + name + ".so"; }

/** Everything a call sent out. */
struct Collected : gsf::PluginEffects {
  struct Sent {
    uint64_t session;
    std::string frame;
    bool binary;
  };
  std::vector<Sent> sends;
  std::vector<std::string> publishes;  // "group|json|<msgpack size>"
  std::vector<std::string> logs;       // "level|line"

  void Send(uint64_t session, std::string_view frame, bool binary) override {
    sends.push_back(Sent{session, std::string(frame), binary});
  }
  void Publish(std::string_view group, std::string_view json, std::string_view msgpack) override {
    publishes.push_back(std::string(group) + "|" + std::string(json) + "|" + std::to_string(msgpack.size()));
  }
  void Log(int level, std::string_view line) override { logs.push_back(std::to_string(level) + "|" + std::string(line)); }
};

/** Loads a plugin into the process host; on failure returns null and fills `reason` and `message`. */
inline const gsf::NativePlugin* TryLoad(const std::string& path, std::string* reason = nullptr,
                                        std::string* message = nullptr, Collected* effects = nullptr) {
  Collected scratch;
  try {
    return &gsf::ProcessPluginHost().Load(path, effects ? effects : &scratch);
  } catch (const gsf::PluginLoadError& e) {
    if (reason) *reason = e.reason();
    if (message) *message = e.what();
    return nullptr;
  }
}

/** The handler index of `name` in a loaded plugin. */
inline uint32_t HandlerOf(const gsf::NativePlugin& p, const std::string& name) {
  for (uint32_t i : p.handlers) {
    if (gsf::ProcessPluginHost().Handler(i)->name == name) return i;
  }
  return UINT32_MAX;
}

/** An exported global of a loaded plugin. */
template <typename T>
T* PluginGlobal(const std::string& path, const char* symbol) {
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  T* p = lib ? static_cast<T*>(::dlsym(lib, symbol)) : nullptr;
  if (lib) ::dlclose(lib);  // drops only the reference NOLOAD took
  return p;
}

/** An event of the process queue, taken and completed by a test slot. */
struct QueuedEvent {
  uint64_t id, tag;
  std::string name, handler;
  uint64_t session;
  int kind;
  std::string payload;
};

/** Takes and completes everything queued in the process runtime; in push order. */
inline std::vector<QueuedEvent> DrainQueue() {
  gsf::Runtime& rt = gsf::ProcessRuntime();
  static int slot = rt.queue.SlotRegister(4242);
  std::vector<QueuedEvent> out;
  for (;;) {
    std::vector<double> meta(64 * gsf::kTakeStride);
    std::vector<uint8_t> bytes(1 << 16);
    int64_t n = rt.queue.Take(slot, meta.data(), 64, bytes.data(), bytes.size());
    if (n <= 0) break;
    for (int64_t i = 0; i < n; ++i) {
      const double* m = &meta[static_cast<size_t>(i) * gsf::kTakeStride];
      out.push_back(QueuedEvent{static_cast<uint64_t>(m[0]), static_cast<uint64_t>(m[1]),
                                rt.names.NameOf(static_cast<uint32_t>(m[2])), rt.names.NameOf(static_cast<uint32_t>(m[3])),
                                static_cast<uint64_t>(m[4]), static_cast<int>(m[5]),
                                std::string(reinterpret_cast<const char*>(bytes.data()) + static_cast<size_t>(m[6]),
                                            static_cast<size_t>(m[7]))});
    }
    std::vector<double> timings(static_cast<size_t>(n) * gsf::kCompleteStride, 0.0);
    for (int64_t i = 0; i < n; ++i) timings[static_cast<size_t>(i) * gsf::kCompleteStride + gsf::kFlags] = gsf::kFlagNotRun;
    rt.queue.Complete(slot, static_cast<size_t>(n), timings.data());
  }
  std::sort(out.begin(), out.end(), [](const QueuedEvent& a, const QueuedEvent& b) { return a.id < b.id; });
  return out;
}

/** An event context for direct calls. */
inline gsf::EventContext Event(uint64_t id, uint64_t tag, uint8_t kind, uint64_t session, const std::string& name) {
  gsf::EventContext ev;
  ev.event_id = id;
  ev.tag = tag;
  ev.kind = kind;
  ev.session_id = session;
  ev.name_id = gsf::ProcessRuntime().names.Intern(name);
  return ev;
}
