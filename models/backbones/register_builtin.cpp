#include "models/backbones/register_builtin.h"

#include <memory>

#include "models/backbones/torchscript_backbone.h"

namespace svqa {

// Every built-in backbone, one line each: registry.add<Options>(name, description, factory, SVQA_HERE).
void register_builtin_backbones(Registry<Backbone, const RuntimeOptions&>& registry) {
  registry.add<TorchScriptOptions>("torchscript", "an export of python -m models.export (LLaVA-OneVision, Qwen2.5-VL, Qwen3-VL)",
      [](const TorchScriptOptions& o, const RuntimeOptions& r) {
        return std::make_unique<TorchScriptBackbone>(o.export_dir, runtime_device(r), runtime_dtype(r), o.video_resize);
      }, SVQA_HERE);
  // Its K/V depend on the device, the dtype and the CPU threads (the order kernels sum in).
  registry.declare_reads("torchscript", {"runtime.device", "runtime.dtype", "runtime.threads"});
}

}  // namespace svqa
