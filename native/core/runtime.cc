#include "runtime.h"

namespace gsf {

Runtime& ProcessRuntime() {
  static Runtime* runtime = new Runtime();
  return *runtime;
}

}  // namespace gsf
