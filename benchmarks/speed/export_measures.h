#pragma once
// What the speed harness feeds an export and reads off it besides the stream it times: the synthetic
// frames, the sizes the matmul floors need (MLP width, the vision tower's patches), the bytes of
// the weights, and the resident memory a vision call adds.

#include <nlohmann/json.hpp>

#include <cstdint>

#include "benchmarks/speed/stream_bench.h"
#include "models/backbones/torchscript_backbone.h"
#include "models/video/frame_source.h"

namespace svqa {

// Frames [first, first + count) of the synthetic stream: a pattern that changes every frame, at the
// export's frame size (no resize; 384 px where it resizes), made when the stream reaches them.
Frames synthetic_frames(int64_t first, int64_t count, const ImageSpec& image, double fps);

// The MLP width, from decoder layer 0's gate projection (the manifest does not carry it).
int64_t intermediate_size(const TorchScriptBackbone& backbone);

// Patches the vision tower sees per unit: SigLIP's position table rows (LLaVA-OV), or the unit's
// tokens times the merge (Qwen2.5-VL).
int64_t vision_patches(const TorchScriptBackbone& backbone, int64_t tokens_per_unit);

// Bytes of the weights of the vision tower, the text module and every layer; a tensor shared between
// names (tied embeddings and LM head) counted once.
int64_t weights_bytes(const TorchScriptBackbone& backbone);

// Resident memory a vision call adds, for one unit (`unit` frames) and then for
// `o.vision_memory_frames` frames in one call, beside the output features those frames make
// (export_measures.cpp says how it is measured).
nlohmann::json vision_memory(TorchScriptBackbone& backbone, const StreamBenchOptions& o, int64_t unit, int64_t n_init);

}  // namespace svqa
