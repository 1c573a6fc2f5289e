#include "core/registries.h"

namespace svqa {

Registries builtin_registries() {
  Registries r;
  register_builtin_backbones(r.backbone);
  register_builtin_encoders(r.encoding);
  register_builtin_retrievers(r.retrieval);
  register_builtin_benchmarks(r.benchmark);
  return r;
}

}  // namespace svqa
