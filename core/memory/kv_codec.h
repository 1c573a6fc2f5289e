#pragma once
// How the memory bank stores K/V: as the model gives them (identity), or quantised.
//
// int8 / int4 follow StreamingTOM's OQM (oqm.py `_quantize_tensor`): each (kv head, channel) is cut
// into groups of `group_size` consecutive tokens; a group keeps its minimum and its scale
// (max − min) / (2^bits − 1) and each value the code round((x − min) / scale), so a decoded value
// is within scale / 2 of the original. int4 packs two codes a byte. Where the reference asserts the
// tokens fill whole groups, a block's last group is padded with copies of its last token (its
// minimum and maximum stay those of the real tokens) and the padding is dropped on decode.
//
// The coded form of a tensor [n, kv_heads, d] is one uint8 tensor: the float32 scales
// [kv_heads·d, groups], the float32 minimums (same shape), then the codes, group after group.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace svqa {

struct KvCodecOptions {
  std::string type = "identity";  // identity | int8 | int4
  int64_t group_size = 32;        // tokens per quantisation group (OQM's oqm_group_size)
};

class KvCodec {
 public:
  // Throws std::invalid_argument naming the type or group size when they are not usable.
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
    int64_t n = 0, channels = 0, groups = 0, padded = 0;  // padded = groups * group_size tokens
    int64_t scale_bytes = 0, code_bytes = 0;
  };
  Layout layout(const std::vector<int64_t>& shape) const;
  // The scales and minimums [channels, groups] float32 of a coded form.
  std::pair<at::Tensor, at::Tensor> read_scales(const at::Tensor& coded, const Layout& l) const;

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
