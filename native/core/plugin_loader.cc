// PluginHost::Load: every check on the file and the descriptor before any plugin function runs.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "plugin_api.h"
#include "plugin_host.h"
#include "plugin_lifecycle.h"
#include "plugin_results.h"
#include "runtime.h"

namespace gsf {

namespace {

// The size of gsf_type_plugin in ABI 1.0 (and 1.1): the smallest descriptor this host accepts.
constexpr uint32_t kDescriptorSize10 = GSF_PLUGIN_DESCRIPTOR_SIZE_1_0;
constexpr size_t kMaxPluginNameBytes = 255;  // a msgpack str8 holds the name in event payloads

[[noreturn]] void Fail(LoadFailure failure, const std::string& path, const std::string& reason) {
  throw PluginLoadError(failure, path + ": " + reason);
}

// The ELF machine (e_machine) this process runs on; 0 where unknown (then not checked).
constexpr unsigned kHostMachine =
#if defined(__x86_64__)
    62;
#elif defined(__i386__)
    3;
#elif defined(__aarch64__)
    183;
#elif defined(__arm__)
    40;
#elif defined(__riscv)
    243;
#elif defined(__powerpc64__)
    21;
#elif defined(__s390x__)
    22;
#elif defined(__loongarch64)
    258;
#else
    0;
#endif

// A readable name of an ELF e_machine value.
std::string MachineName(unsigned machine) {
  switch (machine) {
    case 2: return "SPARC";
    case 3: return "x86 (i386)";
    case 8: return "MIPS";
    case 20: return "PowerPC";
    case 21: return "PowerPC 64";
    case 22: return "s390";
    case 40: return "ARM (32-bit)";
    case 43: return "SPARC V9";
    case 50: return "IA-64";
    case 62: return "x86-64";
    case 183: return "AArch64 (arm64)";
    case 243: return "RISC-V";
    case 258: return "LoongArch";
  }
  return "an unknown architecture";
}

// Reads `n` bytes at `offset`; false when the file has fewer.
bool ReadAt(int fd, uint64_t offset, unsigned char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

// Little- or big-endian field of an ELF file.
uint64_t Field(const unsigned char* p, size_t n, bool big) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[big ? n - 1 - i : i]) << (8 * i);
  return v;
}

// Whether [offset, offset + length) lies inside a file of `size` bytes.
bool Inside(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// Checks an ELF file before dlopen maps it: a library of another machine, class or byte order
// is named as such, and one whose program headers or segments reach past the end of the file
// (cut short, or still being written) is refused: dlopen would map those pages, and touching
// them kills the process with SIGBUS. Empty when the file may be loaded.
std::string ElfProblem(int fd, uint64_t size, const unsigned char* h, LoadFailure* kind) {
  *kind = LoadFailure::kNotLibrary;
  const bool is64 = h[4] == 2, big = h[5] == 2;
  if (h[4] != 1 && h[4] != 2) return "not a shared library (an ELF file of unknown class " + std::to_string(h[4]) + ")";
  if (h[5] != 1 && h[5] != 2) return "not a shared library (an ELF file of unknown byte order " + std::to_string(h[5]) + ")";
  const size_t ehsize = is64 ? 64 : 52;
  unsigned char eh[64] = {0};
  if (!ReadAt(fd, 0, eh, ehsize)) {
    *kind = LoadFailure::kTruncated;
    return "truncated: the file has " + std::to_string(size) + " bytes, less than its ELF header";
  }
  auto f = [&](size_t at, size_t n) { return Field(eh + at, n, big); };
  const unsigned type = static_cast<unsigned>(f(16, 2)), machine = static_cast<unsigned>(f(18, 2));
  *kind = LoadFailure::kForeignMachine;
  if (kHostMachine != 0 && machine != kHostMachine) {
    return "built for " + MachineName(machine) + " (ELF e_machine " + std::to_string(machine) + "), but this machine is " +
           MachineName(kHostMachine) + " (e_machine " + std::to_string(kHostMachine) + "): build the plugin for this machine";
  }
  const bool host64 = sizeof(void*) == 8;
  if (is64 != host64) {
    return std::string("built as a ") + (is64 ? "64" : "32") + "-bit library, but this process is " + (host64 ? "64" : "32") +
           "-bit: build the plugin for this machine";
  }
  const uint16_t probe = 1;
  const bool host_big = *reinterpret_cast<const unsigned char*>(&probe) == 0;
  if (big != host_big) {
    return std::string("built for a ") + (big ? "big" : "little") + "-endian machine, but this machine is " +
           (host_big ? "big" : "little") + "-endian: build the plugin for this machine";
  }
  *kind = LoadFailure::kNotLibrary;
  if (type != 3) return "not a shared library (an ELF file of type " + std::to_string(type) + ", not ET_DYN)";
  const uint64_t phoff = f(is64 ? 32 : 28, is64 ? 8 : 4), shoff = f(is64 ? 40 : 32, is64 ? 8 : 4);
  const uint64_t phentsize = f(is64 ? 54 : 42, 2), phnum = f(is64 ? 56 : 44, 2);
  const uint64_t shentsize = f(is64 ? 58 : 46, 2), shnum = f(is64 ? 60 : 48, 2);
  const uint64_t phmin = is64 ? 56 : 32;
  const std::string bytes = " (the file has " + std::to_string(size) + " bytes: cut short, or still being written?)";
  if (phnum == 0) return "not a shared library (an ELF file without program headers)";
  if (phentsize < phmin) return "not a shared library (ELF program header size " + std::to_string(phentsize) + ")";
  *kind = LoadFailure::kTruncated;
  if (!Inside(phoff, phnum * phentsize, size)) return "truncated: its program headers end past the end of the file" + bytes;
  unsigned char ph[56];
  for (uint64_t i = 0; i < phnum; ++i) {
    if (!ReadAt(fd, phoff + i * phentsize, ph, phmin)) return "truncated: cannot read program header " + std::to_string(i) + bytes;
    const uint64_t offset = Field(ph + (is64 ? 8 : 4), is64 ? 8 : 4, big);
    const uint64_t filesz = Field(ph + (is64 ? 32 : 16), is64 ? 8 : 4, big);
    if (filesz != 0 && !Inside(offset, filesz, size)) {
      return "truncated: segment " + std::to_string(i) + " (bytes " + std::to_string(offset) + " to " +
             std::to_string(offset + filesz) + ") ends past the end of the file" + bytes;
    }
  }
  if (shoff != 0 && !Inside(shoff, shnum * shentsize, size)) {
    return "truncated: its section headers end past the end of the file" + bytes;
  }
  return "";
}

// Whether the file is a complete shared library of this platform; empty when it is, else why
// (and the kind of failure in `kind`).
std::string NotALibrary(const std::string& path, LoadFailure* kind) {
  *kind = LoadFailure::kNotLibrary;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot be read: ") + std::strerror(errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    std::string why = std::string("cannot be read: ") + std::strerror(errno);
    ::close(fd);
    return why;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  unsigned char h[20] = {0};
  size_t n = 0;
  while (n < sizeof h) {
    ssize_t r = ::pread(fd, h + n, sizeof h - n, static_cast<off_t>(n));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<size_t>(r);
  }
  if (n >= 18 && h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F') {
    std::string problem = ElfProblem(fd, size, h, kind);
    ::close(fd);
    return problem;
  }
  ::close(fd);
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
    case LoadFailure::kTruncated: return "truncated";
    case LoadFailure::kForeignMachine: return "foreign_machine";
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
  std::string here = std::to_string(GSF_PLUGIN_ABI_MAJOR) + "." + std::to_string(host_minor_);
  if (d->abi_major != GSF_PLUGIN_ABI_MAJOR) {
    Fail(LoadFailure::kAbiMajor, path, "built for plugin ABI " + built + ", this gsf speaks ABI " + here +
                                           " (the major version must match: rebuild the plugin)");
  }
  if (d->abi_minor > host_minor_) {
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
  // Event payloads carry the name as a msgpack str8 (timer_start's events, for one).
  if (std::strlen(d->name) > kMaxPluginNameBytes) {
    Fail(LoadFailure::kBadDescriptor, path, "descriptor name is " + std::to_string(std::strlen(d->name)) + " bytes long (at most " +
                                                std::to_string(kMaxPluginNameBytes) + ")");
  }
  if (!d->version || !*d->version) Fail(LoadFailure::kBadDescriptor, path, "descriptor has no version");
  if (!d->init) Fail(LoadFailure::kBadDescriptor, path, "descriptor has no init function");
}

const NativePlugin& PluginHost::LoadLocked(const std::string& path, PluginEffects* effects, std::string_view replaces) {
  LoadFailure kind;
  std::string not_library = NotALibrary(path, &kind);
  if (!not_library.empty()) Fail(kind, path, not_library);
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
  // The lifecycle extension (1.2), each hook read only where struct_size reaches past it.
  auto within = [d](size_t offset, size_t size) { return d->struct_size >= offset + size; };
  if (within(offsetof(gsf_type_plugin, on_start), sizeof d->on_start)) plugin.on_start = d->on_start;
  if (within(offsetof(gsf_type_plugin, on_stop), sizeof d->on_stop)) plugin.on_stop = d->on_stop;
  if (within(offsetof(gsf_type_plugin, on_unload), sizeof d->on_unload)) plugin.on_unload = d->on_unload;
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
    // What init started or registered is ended and its user data released: the copy never runs.
    EndCopyHoldings(&plugin);
    ReleaseHandlerData(&plugin);
    ProcessResultHost().ForgetPlugin(&plugin);
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
