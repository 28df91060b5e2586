// PluginHost::Load: every check on the file and the descriptor before any plugin function runs.
#include <dlfcn.h>
#include <sys/stat.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "plugin_api.h"
#include "plugin_host.h"
#include "runtime.h"

namespace gsf {

namespace {

// The size of gsf_type_plugin in ABI 1.0: the smallest descriptor this host accepts.
constexpr uint32_t kDescriptorSize10 = static_cast<uint32_t>(sizeof(gsf_type_plugin));

[[noreturn]] void Fail(LoadFailure failure, const std::string& path, const std::string& reason) {
  throw PluginLoadError(failure, path + ": " + reason);
}

// Whether the file starts like a shared library of this platform; empty when it does.
std::string NotALibrary(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::string("cannot be read: ") + std::strerror(errno);
  unsigned char h[20] = {0};
  size_t n = std::fread(h, 1, sizeof h, f);
  std::fclose(f);
  if (n >= 18 && h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F') {
    unsigned type = h[5] == 2 ? (h[16] << 8 | h[17]) : (h[17] << 8 | h[16]);  // EI_DATA: 2 is big-endian
    if (type == 3) return "";                                                // ET_DYN
    return "not a shared library (an ELF file of type " + std::to_string(type) + ", not ET_DYN)";
  }
  uint32_t magic = static_cast<uint32_t>(h[0]) | h[1] << 8 | h[2] << 16 | static_cast<uint32_t>(h[3]) << 24;
  if (n >= 16 && (magic == 0xfeedfacfu || magic == 0xfeedfaceu)) {
    uint32_t type = static_cast<uint32_t>(h[12]) | h[13] << 8 | h[14] << 16 | static_cast<uint32_t>(h[15]) << 24;
    if (type == 6 || type == 8) return "";  // MH_DYLIB, MH_BUNDLE
    return "not a shared library (a Mach-O file of type " + std::to_string(type) + ")";
  }
  if (n >= 4 && (magic == 0xbebafecau || magic == 0xcafebabeu)) return "";  // universal binary
  return "not a shared library (no ELF or Mach-O header)";
}

}  // namespace

const char* PluginLoadError::reason() const {
  switch (failure_) {
    case LoadFailure::kMissing: return "missing";
    case LoadFailure::kNotLibrary: return "not_library";
    case LoadFailure::kCannotOpen: return "cannot_open";
    case LoadFailure::kNoEntry: return "no_entry";
    case LoadFailure::kAbiMajor: return "abi_major";
    case LoadFailure::kAbiMinor: return "abi_minor";
    case LoadFailure::kStructSize: return "struct_size";
    case LoadFailure::kBadDescriptor: return "bad_descriptor";
    case LoadFailure::kNameTaken: return "name_taken";
    case LoadFailure::kInitFailed: return "init_failed";
    case LoadFailure::kDuplicate: return "duplicate";
    case LoadFailure::kTooMany: return "too_many";
  }
  return "unknown";
}

const NativePlugin& PluginHost::Load(std::string_view path_view, PluginEffects* effects, std::string_view replaces) {
  std::string path(path_view);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) Fail(LoadFailure::kMissing, path, "no such file");
  if (!S_ISREG(st.st_mode)) Fail(LoadFailure::kNotLibrary, path, "not a shared library (not a regular file)");
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved)) path = resolved;
  std::lock_guard<std::mutex> lock(load_mu_);
  auto loaded = by_path_.find(path);
  if (loaded != by_path_.end()) return *loaded->second;
  auto failed = failed_.find(path);
  if (failed != failed_.end()) throw PluginLoadError(failed_kind_[path], failed->second);
  try {
    return LoadLocked(path, effects, replaces);
  } catch (const PluginLoadError& e) {
    failed_[path] = e.what();
    failed_kind_[path] = e.failure();
    throw;
  }
}

void PluginHost::CheckDescriptor(const std::string& path, const gsf_type_plugin* d) {
  // struct_size, abi_major and abi_minor sit at the same offsets in every version.
  std::string built = std::to_string(d->abi_major) + "." + std::to_string(d->abi_minor);
  std::string here = std::to_string(GSF_PLUGIN_ABI_MAJOR) + "." + std::to_string(GSF_PLUGIN_ABI_MINOR);
  if (d->abi_major != GSF_PLUGIN_ABI_MAJOR) {
    Fail(LoadFailure::kAbiMajor, path, "built for plugin ABI " + built + ", this gsf speaks ABI " + here +
                                           " (the major version must match: rebuild the plugin)");
  }
  if (d->abi_minor > GSF_PLUGIN_ABI_MINOR) {
    Fail(LoadFailure::kAbiMinor, path, "built for plugin ABI " + built + ", newer than this gsf's " + here +
                                           " (update gsf or build against its header)");
  }
  if (d->struct_size > sizeof(gsf_type_plugin)) {
    Fail(LoadFailure::kStructSize, path, "descriptor struct_size " + std::to_string(d->struct_size) +
                                             " is larger than this gsf knows (" + std::to_string(sizeof(gsf_type_plugin)) + ")");
  }
  if (d->struct_size < kDescriptorSize10) {
    Fail(LoadFailure::kStructSize, path, "descriptor struct_size " + std::to_string(d->struct_size) +
                                             " is smaller than ABI 1.0's (" + std::to_string(kDescriptorSize10) + ")");
  }
  if (!d->name || !*d->name) Fail(LoadFailure::kBadDescriptor, path, "descriptor has no name");
  if (!d->version || !*d->version) Fail(LoadFailure::kBadDescriptor, path, "descriptor has no version");
  if (!d->init) Fail(LoadFailure::kBadDescriptor, path, "descriptor has no init function");
}

const NativePlugin& PluginHost::LoadLocked(const std::string& path, PluginEffects* effects, std::string_view replaces) {
  std::string not_library = NotALibrary(path);
  if (!not_library.empty()) Fail(LoadFailure::kNotLibrary, path, not_library);
  // Static constructors of the library run here: the one plugin code no check can precede.
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = ::dlerror();
    Fail(LoadFailure::kCannotOpen, path, std::string("cannot be loaded: ") + (why ? why : "dlopen failed"));
  }
  // Never dlclose: handlers, user data and host pointers of the plugin live as long as the process.
  auto* d = static_cast<const gsf_type_plugin*>(::dlsym(library, GSF_PLUGIN_ENTRY_SYMBOL));
  if (!d) {
    for (int major = 0; major < 10; ++major) {
      std::string other = "gsf_plugin_entry_v" + std::to_string(major);
      if (major != GSF_PLUGIN_ABI_MAJOR && ::dlsym(library, other.c_str())) {
        Fail(LoadFailure::kAbiMajor, path, "built for plugin ABI " + std::to_string(major) + " (exports " + other +
                                               "), this gsf speaks ABI " + std::to_string(GSF_PLUGIN_ABI_MAJOR) +
                                               " (rebuild the plugin)");
      }
    }
    Fail(LoadFailure::kNoEntry, path, std::string("no symbol ") + GSF_PLUGIN_ENTRY_SYMBOL +
                                          ": not a gsf plugin (define one with GSF_PLUGIN_DEFINE)");
  }
  CheckDescriptor(path, d);
  if (!replaces.empty() && replaces != d->name) {
    Fail(LoadFailure::kBadDescriptor, path, "the library is plugin '" + std::string(d->name) + "', not '" +
                                                std::string(replaces) + "' (a reload keeps the plugin's name)");
  }
  for (const NativePlugin& p : plugins_) {
    if (p.name == d->name && replaces.empty()) {
      Fail(LoadFailure::kNameTaken, path, "plugin name '" + std::string(d->name) + "' is already taken by " + p.path);
    }
  }

  plugins_.emplace_back();
  NativePlugin& plugin = plugins_.back();
  plugin.path = path;
  plugin.name = d->name;
  plugin.version = d->version;
  plugin.library = library;
  plugin.descriptor = d;
  plugin.replacing = !replaces.empty();
  gsf_type_status status;
  std::string message;
  {
    CallScope scope(&plugin, effects, nullptr, true);
    try {
      status = d->init(&api_, scope.call());
    } catch (const std::exception& e) {
      status = GSF_STATUS_INTERNAL;
      scope.state().error = std::string("an exception escaped init: ") + e.what();
    } catch (...) {
      status = GSF_STATUS_INTERNAL;
      scope.state().error = "an exception escaped init";
    }
    message = scope.state().error;
  }
  auto forget = [&] {
    ProcessApiHost().Forget(&plugin);
    plugins_.pop_back();
  };
  if (!plugin.conflict.empty()) {
    std::string conflict = plugin.conflict;
    forget();
    Fail(LoadFailure::kDuplicate, path, conflict);
  }
  if (status != GSF_STATUS_OK) {
    std::string reason = std::string("init failed: ") + gsf_status_name(status) + ": " +
                         (message.empty() ? "(the plugin gave no message)" : message);
    forget();
    Fail(LoadFailure::kInitFailed, path, reason);
  }
  if (handler_count_ + plugin.pending.size() > kMaxHandlers) {
    forget();
    Fail(LoadFailure::kTooMany, path, "more than " + std::to_string(kMaxHandlers) + " native handlers in the process");
  }
  if (plugin.replacing) {
    // Names now belong to the new copy: what the older copies registered and it no longer
    // does is free for other plugins.
    for (auto* table : {&events_, &messages_}) {
      for (auto it = table->begin(); it != table->end();) {
        const NativeHandler* h = handlers_[it->second].load(std::memory_order_relaxed);
        it = h->plugin->name == plugin.name ? table->erase(it) : std::next(it);
      }
    }
  }
  plugin.replacing = false;
  for (NativeHandler& h : plugin.pending) {
    h.name_id = runtime_->names.Intern(h.name);
    handler_store_.push_back(h);
    uint32_t index = handler_count_++;
    plugin.handlers.push_back(index);
    (h.message ? messages_ : events_)[h.name] = index;
    handlers_[index].store(&handler_store_.back(), std::memory_order_release);
    if (!h.message) {
      std::unique_lock<std::shared_mutex> known(known_mu_);
      known_events_.insert(h.name_id);
    }
  }
  plugin.pending.clear();
  by_path_[path] = &plugin;
  return plugin;
}

}  // namespace gsf
