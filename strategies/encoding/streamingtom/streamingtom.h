#pragma once
// StreamingTOM (Chen et al., 2025, arXiv 2510.18269; reference code YIGE24/StreamingTOM, LLaVA-OV):
// Causal Temporal Reduction cuts each frame to `retain_tokens` before the LLM (ctr_reducer.h), the
// reduced frames are prefilled as ReKV prefills frames (a sliding window over the last `n_local`
// tokens plus the system-prompt sinks), one block per frame with its mean key as representative.
// The rest of Online Quantized Memory is not the encoder's: 4-bit groups are the bank's KV codec
// (`stream.kv_codec: int4`, a group per frame: core/memory/kv_codec.h), and the per-question top-k
// of groups by cosine between the question's mean query and each group's mean key is `internal`
// retrieval with `similarity: cosine` (same ranking: docs/strategies.md). The preset
// experiments/methods/streamingtom.yaml puts the three together.

#include <cstdint>
#include <memory>
#include <string>

#include "core/config/runtime.h"
#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

struct StreamingtomOptions {
  int64_t retain_tokens = 50;
  double similarity_threshold = 0.9;
  int64_t k = 7;
  double beta = 0.6;
  int64_t n_local = 4800;
  std::string positions = "window";
  std::string sink_entry = "migrate";
  static void declare(Schema<StreamingtomOptions>& s) {
    s.field("retain_tokens", &StreamingtomOptions::retain_tokens,
            "visual tokens kept per frame by CTR (CTR_RETAIN_TOKENS; equal to the quantisation group, OQM_GROUP_SIZE)")
        .min(1)
        .max(kMaxTokensOption);
    s.field("similarity_threshold", &StreamingtomOptions::similarity_threshold,
            "a token is static when its cosine similarity with the previous frame's token exceeds this "
            "(CTR_SIMILARITY_THRESHOLD)")
        .min(0)
        .max(1);
    s.field("k", &StreamingtomOptions::k, "neighbours of DPC-kNN density among static tokens (CTR_K)").min(1).max(1e6);
    s.field("beta", &StreamingtomOptions::beta,
            "a static cluster's token: beta · its centre + (1 − beta) · its members' mean (CTR_BETA)")
        .min(0)
        .max(1);
    s.field("n_local", &StreamingtomOptions::n_local,
            "tokens of the sliding window a frame is prefilled against, sinks apart (OQM_SLIDING_WINDOW_SIZE)")
        .min(1)
        .max(kMaxTokensOption);
    declare_window_rules(s);
  }
};

// CTR in front of ReKV's sliding-window encoder; the CTR's tie-break noise is seeded by `runtime.seed`.
std::unique_ptr<EncodingStrategy> make_streamingtom(const StreamingtomOptions& options, const RuntimeOptions& runtime);

}  // namespace svqa
