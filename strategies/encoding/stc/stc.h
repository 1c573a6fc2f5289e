#pragma once
// STC (Wang et al., CVPR 2026, "Accelerating Streaming Video Large Language Models via Hierarchical
// Token Compression"; reference code lern-to-write/STC, package stc/, with its ReKV integration
// models/rekv/): two steps in front of ReKV's sliding-window prefill (one block per frame, the
// system-prompt sinks; strategies/kit).
//   STC-Cacher (stc_cacher.h) runs the vision tower itself, layer by layer (the export's layer-by-layer
//   tower, models/backbones/vision_layers.h), recomputing on most frames only the tokens that changed
//   since the last refresh frame.
//   STC-Pruner (stc_pruner.h) then keeps `tokens_per_frame` of each frame's tokens, scored against a
//   temporal and a spatial anchor; the kept tokens are laid out back to back (1-D positions).
// The refresh count restarts after each question: the authors' streaming driver encodes the frames
// new since the previous question with one encode_video call, whose chunk count starts at 0
// (abstract_rekv.py encode_video, one frame a chunk).
// The preset experiments/methods/stc.yaml gives each value's source.

#include <cstdint>
#include <memory>
#include <string>

#include "core/config/schema.h"
#include "engine/memory_contract.h"
#include "engine/strategy.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

struct StcOptions {
  double update_ratio = 0.25;
  int64_t refresh_interval = 2;
  int64_t tokens_per_frame = 64;
  double channel_keep_ratio = 0.5;
  int64_t n_local = 15000;
  std::string positions = "window";
  std::string sink_entry = "migrate";
  bool answer_fallback = true;
  bool record_tokens = false;
  static void declare(Schema<StcOptions>& s) {
    s.field("update_ratio", &StcOptions::update_ratio,
            "STC-Cacher: share of a frame's vision tokens recomputed in each layer between refresh frames "
            "(STC_UPDATE_TOKEN_RATIO)")
        .min(1e-6)
        .max(1);
    s.field("refresh_interval", &StcOptions::refresh_interval,
            "STC-Cacher: every this many frames one is encoded in full and becomes the reference (STC_CACHE_INTERVAL)")
        .min(1)
        .max(1e6);
    s.field("tokens_per_frame", &StcOptions::tokens_per_frame,
            "STC-Pruner: visual tokens kept per frame before the LLM (STC_TOKEN_PER_FRAME)")
        .min(1)
        .max(kMaxTokensOption);
    s.field("channel_keep_ratio", &StcOptions::channel_keep_ratio,
            "STC-Pruner: share of hidden channels (the lowest-variance ones) its scores read")
        .min(1e-6)
        .max(1);
    s.field("n_local", &StcOptions::n_local, "ReKV's local attention window in tokens, sinks apart")
        .min(1)
        .max(kMaxTokensOption);
    declare_window_rules(s);
    s.field("answer_fallback", &StcOptions::answer_fallback,
            "past n_local context tokens the answer attends to the sinks + a sliding window of n_local (ReKV)");
    s.field("record_tokens", &StcOptions::record_tokens,
            "write each frame's recomputed tokens per vision layer and kept tokens under extra.stc (tests)");
  }
};

std::unique_ptr<EncodingStrategy> make_stc(const StcOptions& options);
// Its registration's traits: ReKV's window's, except that it reads frames, not visual tokens.
EncoderProvides stc_provides(const StcOptions& options);

}  // namespace svqa
