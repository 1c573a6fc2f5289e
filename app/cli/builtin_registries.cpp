#include "app/cli/builtin_registries.h"

#include "benchmarks/datasets/register_builtin.h"
#include "models/backbones/register_builtin.h"
#include "strategies/encoding/register_builtin.h"
#include "strategies/retrieval/register_builtin.h"

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
