#pragma once
// How the memory bank stores K/V: as the model gives them (identity), or quantised.
//
// int8 / int4 follow StreamingTOM's OQM (oqm.py `_quantize_tensor`): each (kv head, channel) is cut
// into groups of `group_size` consecutive tokens; a group keeps its minimum and its scale
// (max − min) / (2^bits − 1) and each value the code round((x − min) / scale), so a decoded value
// is within scale / 2 of the original. Where the reference asserts the tokens fill whole groups, a
// block's last group here is partial: its minimum and scale are those of the tokens it has, and
// only real tokens have codes, so no bytes are spent (or counted as the method's memory) on padding.
//
// The coded form of a tensor [n, kv_heads, d] is one uint8 tensor: the float32 scales
// [kv_heads·d, groups], the float32 minimums (same shape), then the codes [kv_heads·d, n], channel
// after channel; int4 packs two codes a byte (code 2i in the low half, 2i + 1 in the high half,
// as oqm.py `_pack_Nbit`), the last byte half empty when the count is odd.
//
// group_size is at most kMaxKvCodecGroup: the references group 32 to 128 tokens (KIVI) or one
// frame's kept tokens (OQM: 50, 64 in its configs), and one frame of every exported backbone fits in
// 1024 tokens (LLaVA-OneVision 196, Qwen2.5-VL at most 768 a unit); past that a group only
// coarsens the scale (its range spans several frames) at no saving worth having.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace svqa {

inline constexpr int64_t kMaxKvCodecGroup = 1024;

struct KvCodecOptions {
  std::string type = "identity";  // identity | int8 | int4
  int64_t group_size = 32;        // tokens per quantisation group (OQM's oqm_group_size)
};

class KvCodec {
 public:
  // Throws std::invalid_argument naming the type or group size (1 to kMaxKvCodecGroup) when they are not usable.
  explicit KvCodec(KvCodecOptions options = {});

  bool identity() const { return bits_ == 0; }
  int bits() const { return bits_; }
  int64_t group_size() const { return options_.group_size; }
  const KvCodecOptions& options() const { return options_; }

  // [n, kv_heads, d] of any floating dtype and device -> its coded form, uint8 on the CPU.
  at::Tensor encode(const at::Tensor& x) const;
  // The coded form of a tensor of `shape` (any device) decoded into `out` ([n, kv_heads, d] view,
  // any device and dtype).
  void decode_into(const at::Tensor& coded, const std::vector<int64_t>& shape, const at::Tensor& out) const;
  // As decode_into, into a new float tensor of `dtype` on the CPU.
  at::Tensor decode(const at::Tensor& coded, const std::vector<int64_t>& shape, at::ScalarType dtype) const;
  // Bytes of the coded form of a tensor of `shape`.
  int64_t coded_bytes(const std::vector<int64_t>& shape) const;
  // Each value's group scale, [n, kv_heads, d] float32, read from a coded form: the error bound of
  // a decoded value is half of it.
  at::Tensor scales_per_value(const at::Tensor& coded, const std::vector<int64_t>& shape) const;

 private:
  struct Layout {
    int64_t n = 0, channels = 0, groups = 0;  // the last group may be partial
    int64_t scale_bytes = 0, code_bytes = 0;
  };
  Layout layout(const std::vector<int64_t>& shape) const;
  // The scales and minimums [channels, groups] float32 of a coded form.
  std::pair<at::Tensor, at::Tensor> read_scales(const at::Tensor& coded, const Layout& l) const;
  // [channels, groups] -> [channels, n]: each token's group's value.
  at::Tensor per_token(const at::Tensor& by_group, const Layout& l) const;

  KvCodecOptions options_;
  int bits_ = 0;
};

// The shapes and dtype a block's K/V had before coding: per layer K then V (empty where absent).
struct PlainKvLayout {
  std::vector<std::vector<int64_t>> shapes;
  at::ScalarType dtype = at::kFloat;
};

// Replaces each defined tensor of `keys` and `values` by its coded form; returns what they were.
PlainKvLayout encode_kv(const KvCodec& codec, std::vector<at::Tensor>& keys, std::vector<at::Tensor>& values);
// Replaces each coded tensor by its decoded form, as `plain` describes.
void decode_kv(const KvCodec& codec, const PlainKvLayout& plain, std::vector<at::Tensor>& keys,
               std::vector<at::Tensor>& values);

}  // namespace svqa
