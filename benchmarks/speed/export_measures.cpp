#include "benchmarks/speed/export_measures.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/speed/process_memory.h"
#include "core/nn/large_allocations.h"
#include "engine/visual_units.h"

namespace svqa {

Frames synthetic_frames(int64_t first, int64_t count, const ImageSpec& image, double fps) {
  const int64_t h = image.height > 0 ? image.height : 384, w = image.width > 0 ? image.width : 384;
  const auto ramp = at::arange(h * w * 3, at::kLong).view({1, h * w * 3});
  const auto index = at::arange(first, first + count, at::kLong).view({count, 1});
  Frames f;
  f.rgb = ((ramp * 7 + index * 13 + ramp / (w * 3) * 5) % 251).to(at::kByte).view({count, h, w, 3});
  for (int64_t i = first; i < first + count; ++i) f.timestamps.push_back(static_cast<double>(i) / fps);
  f.fps = fps;
  f.first = first;
  return f;
}

int64_t intermediate_size(const TorchScriptBackbone& backbone) {
  for (const auto& [name, w] : backbone.layer_weights(0))
    if (name.size() >= 16 && name.compare(name.size() - 16, 16, "gate_proj.weight") == 0) return w.size(0);
  throw std::runtime_error(backbone.manifest().layer_files.front() + ": no *gate_proj.weight (the floor needs the MLP width)");
}

int64_t vision_patches(const TorchScriptBackbone& backbone, int64_t tokens_per_unit) {
  const auto& m = backbone.manifest();
  if (m.architecture != Architecture::LlavaOnevision)
    return tokens_per_unit * m.vision.spatial_merge_size * m.vision.spatial_merge_size;
  for (const auto& [name, w] : backbone.vision_weights())
    if (name.find("position_embedding") != std::string::npos) return w.size(0);
  throw std::runtime_error(m.vision_file + ": no position_embedding (the floor needs the patch count)");
}

int64_t weights_bytes(const TorchScriptBackbone& backbone) {
  std::vector<std::map<std::string, at::Tensor>> parts{backbone.vision_weights(), backbone.text_weights()};
  for (int64_t i = 0; i < backbone.num_layers(); ++i) parts.push_back(backbone.layer_weights(i));
  std::set<const void*> seen;
  int64_t n = 0;
  for (const auto& part : parts)
    for (const auto& [name, w] : part)
      if (seen.insert(w.storage().data()).second) n += static_cast<int64_t>(w.storage().nbytes());
  return n;
}

// Resident memory a vision call adds, for one unit and then for `vision_memory_frames` frames in one
// call, beside the output features those frames make: a tower that keeps no activations grows by the
// features only. Run first, in a fresh process, so that the allocator holds no freed memory of earlier
// calls to hide either figure. One unit's call goes first and is not counted: TorchScript's executor
// profiles its first calls and optimises the graph on a later one, a one-time cost. Each counted call
// is measured from the process just before it, its frames already made (the caller's input: their int64
// synthesis here briefly took 2-3 x 57 MB for 16 frames, more than the call), to its own peak.
nlohmann::json vision_memory(TorchScriptBackbone& backbone, const StreamBenchOptions& o, int64_t unit, int64_t n_init) {
  nlohmann::json out;
  const int64_t many = std::max(unit, o.vision_memory_frames - o.vision_memory_frames % unit);
  auto call = [&](const Frames& frames, int64_t count) {
    VisualUnitMaker units(backbone, frames);
    const auto made = units.make(0, count, n_init, n_init);
    int64_t feature_bytes = 0;
    for (const auto& u : made) feature_bytes += u.tokens.numel() * static_cast<int64_t>(u.tokens.element_size());
    return feature_bytes;
  };
  call(synthetic_frames(0, unit, backbone.manifest().image, o.fps), unit);  // warm-up, not counted
  bool reset = true;
  for (const int64_t count : {unit, many}) {
    const Frames frames = synthetic_frames(0, count, backbone.manifest().image, o.fps);
    release_free_heap();  // what the allocator kept of earlier calls goes back: the figure is this call's
    reset = reset_peak_memory() && reset;
    const int64_t before = process_memory().rss_bytes;
    const int64_t feature_bytes = call(frames, count);
    out[std::to_string(count)] = {{"peak_above_before", process_memory().peak_bytes - before},
                                  {"feature_bytes", feature_bytes}};
  }
  out["peak_counts_from"] = reset ? "before the call" : "process start";
  return out;
}

}  // namespace svqa
