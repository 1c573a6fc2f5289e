#pragma once
// Rotary position embeddings, computed in C++ so strategies can re-position cached keys.
//
// Positions are always [3, T] int64 (temporal, height, width). Plain RoPE (LLaVA-OV's Qwen2)
// reads row 0; Qwen2.5-VL's mRoPE takes frequency slot i from the row its `mrope_section` says.

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace svqa {

// Tables are float32 and the rotation is computed in float32 whatever the model dtype, the result
// cast back to it (ReKV model/attention/rope.py: `(x.float() * cos + rotate_half(x).float() * sin).to(dtype)`):
// in bf16 a table of angles past a few thousand radians would lose the low frequencies' precision.
struct RotaryTables {
  at::Tensor cos, sin;  // [T, head_dim], float32
};

class RotaryEmbedding {
 public:
  // `mrope_section` empty → plain RoPE; else its entries sum to head_dim / 2.
  RotaryEmbedding(int64_t head_dim, double theta, std::vector<int64_t> mrope_section = {});

  // Tables for `positions`; the last two results are kept and returned again for equal positions:
  // every layer of a question's retrieval pass asks for its context's, then for the question's.
  RotaryTables tables(const at::Tensor& positions) const;
  int64_t head_dim() const { return head_dim_; }

 private:
  int64_t head_dim_;
  at::Tensor inv_freq_;  // [head_dim / 2] float32, as HF: 1 / theta^(2i/d)
  std::vector<int64_t> mrope_section_;
  struct Last {
    at::Tensor positions;
    RotaryTables tables;
  };
  // The two most recent, newest first; shared by copies: equal positions, equal tables.
  std::shared_ptr<std::array<Last, 2>> last_ = std::make_shared<std::array<Last, 2>>();
};

// x [T, heads, d] → x·cos + rotate_half(x)·sin (HF's apply_rotary_pos_emb), computed in float32
// and returned in x's dtype.
at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& t);

// The same, written over x (a view may be rotated in place, e.g. new slots of a KV cache).
void apply_rotary_(const at::Tensor& x, const RotaryTables& t);

// Positions [3, n] for n text tokens starting at `start` (all three rows equal).
at::Tensor text_positions(int64_t start, int64_t n, at::Device device = at::kCPU);

// One past the largest position used so far: where the next text token goes.
int64_t next_position(const at::Tensor& positions);

}  // namespace svqa
