#pragma once
// Qwen3-VL's DeepStack: features of several ViT blocks, added to the hidden states of the first LLM
// layers at the visual tokens' rows. The strategies own the layer loop, so they call `apply` after
// each layer's output; without features it returns h unchanged.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace svqa {

struct DeepStack {
  at::Tensor features;  // [K, n, hidden]: after layer l < K, row rows[i] += features[l][i]
  at::Tensor rows;      // [n] int64: which rows of the layer's hidden states hold the n visual tokens;
                        // undefined: all of them, in order (features [K, T, hidden] over the whole h)

  bool empty() const { return !features.defined() || features.size(0) == 0; }
  int64_t layers() const { return empty() ? 0 : features.size(0); }
  // h [T, hidden] after layer `layer` → with the features added (HF's _deepstack_process, in h's dtype).
  at::Tensor apply(const at::Tensor& h, int64_t layer) const;
};

// The features of visual tokens [begin, begin + n) of `all` [K, N, hidden], placed at rows
// [row, row + n) of a sequence (a block of a streamed video, a window of a prefill).
DeepStack deepstack_slice(const at::Tensor& all, int64_t begin, int64_t n, int64_t row);

// Several DeepStacks over one sequence (e.g. the blocks of a window) as one.
DeepStack concat_deepstack(const std::vector<DeepStack>& parts);

}  // namespace svqa
