#include "core/memory/kv_codec.h"

#include <stdexcept>
#include <utility>

namespace svqa {

KvCodec::KvCodec(KvCodecOptions options) : options_(std::move(options)) {
  if (options_.type == "int8") bits_ = 8;
  else if (options_.type == "int4") bits_ = 4;
  else if (options_.type != "identity")
    throw std::invalid_argument("kv codec: unknown type '" + options_.type + "'; known: identity, int8, int4");
  if (options_.group_size < 1 || options_.group_size > kMaxKvCodecGroup)
    throw std::invalid_argument("kv codec: group_size " + std::to_string(options_.group_size) +
                                ": expected 1 to " + std::to_string(kMaxKvCodecGroup) + " tokens");
}

KvCodec::Layout KvCodec::layout(const std::vector<int64_t>& shape) const {
  if (shape.size() != 3) throw std::invalid_argument("kv codec: expected K/V of shape [n, kv_heads, d]");
  Layout l;
  l.n = shape[0];
  l.channels = shape[1] * shape[2];
  l.groups = (l.n + options_.group_size - 1) / options_.group_size;
  l.scale_bytes = l.channels * l.groups * 4;
  l.code_bytes = (l.channels * l.n * bits_ + 7) / 8;
  return l;
}

int64_t KvCodec::coded_bytes(const std::vector<int64_t>& shape) const {
  const Layout l = layout(shape);
  return 2 * l.scale_bytes + l.code_bytes;
}

at::Tensor KvCodec::per_token(const at::Tensor& by_group, const Layout& l) const {
  const at::Tensor group_of_token = at::arange(l.n, at::kLong).div(options_.group_size, "floor");
  return by_group.index_select(1, group_of_token);
}

at::Tensor KvCodec::encode(const at::Tensor& x) const {
  if (identity()) throw std::logic_error("kv codec: identity does not code tensors");
  const Layout l = layout(x.sizes().vec());
  if (l.n == 0) return at::empty({0}, at::kByte);
  const int64_t g = options_.group_size, whole = l.n / g, rest = l.n % g;
  const double levels = static_cast<double>((1 << bits_) - 1);
  const at::Tensor t = x.to(at::kCPU, at::kFloat).reshape({l.n, l.channels}).t().contiguous();  // [channels, n]
  std::vector<at::Tensor> lows, highs;  // per group: the whole groups, then the partial one
  if (whole > 0) {
    const at::Tensor groups = t.narrow(1, 0, whole * g).view({l.channels, whole, g});
    lows.push_back(groups.amin(-1)), highs.push_back(groups.amax(-1));
  }
  if (rest > 0) {
    const at::Tensor last = t.narrow(1, whole * g, rest);
    lows.push_back(last.amin(-1, true)), highs.push_back(last.amax(-1, true));
  }
  const at::Tensor mins = at::cat(lows, 1), maxs = at::cat(highs, 1);
  const at::Tensor scales = ((maxs - mins) / levels).clamp_min(1e-8);
  at::Tensor codes =
      ((t - per_token(mins, l)) / per_token(scales, l)).clamp_min(0).clamp_max(levels).round().to(at::kByte).flatten();
  if (bits_ == 4) {  // code 2i in the low half of a byte, 2i + 1 in the high half (oqm.py `_pack_Nbit`)
    if (codes.numel() % 2) codes = at::cat({codes, at::zeros({1}, at::kByte)});
    const at::Tensor pairs = codes.view({-1, 2});
    codes = pairs.select(-1, 0).bitwise_or(pairs.select(-1, 1).bitwise_left_shift(4));
  }
  return at::cat({scales.contiguous().view(at::kByte).flatten(), mins.contiguous().view(at::kByte).flatten(),
                  codes.contiguous()});
}

std::pair<at::Tensor, at::Tensor> KvCodec::read_scales(const at::Tensor& coded, const Layout& l) const {
  // Copied out of the coded bytes: they may sit at any byte offset of a slab or a mapped file.
  auto read = [&](int64_t offset) {
    return coded.narrow(0, offset, l.scale_bytes).to(at::kCPU).clone().view(at::kFloat).view({l.channels, l.groups});
  };
  return {read(0), read(l.scale_bytes)};
}

void KvCodec::decode_into(const at::Tensor& coded, const std::vector<int64_t>& shape, const at::Tensor& out) const {
  const Layout l = layout(shape);
  if (l.n == 0) return;
  const auto [scales, mins] = read_scales(coded, l);
  const at::Tensor codes = coded.narrow(0, 2 * l.scale_bytes, l.code_bytes).to(at::kCPU);
  const at::Tensor q = bits_ == 4 ? at::stack({codes.bitwise_and(15), codes.bitwise_right_shift(4)}, -1)
                                        .flatten()
                                        .narrow(0, 0, l.channels * l.n)
                                  : codes;
  const at::Tensor x = q.view({l.channels, l.n}).to(at::kFloat) * per_token(scales, l) + per_token(mins, l);
  out.copy_(x.t().reshape(shape));
}

at::Tensor KvCodec::decode(const at::Tensor& coded, const std::vector<int64_t>& shape, at::ScalarType dtype) const {
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(dtype));
  decode_into(coded, shape, out);
  return out;
}

at::Tensor KvCodec::scales_per_value(const at::Tensor& coded, const std::vector<int64_t>& shape) const {
  const Layout l = layout(shape);
  return per_token(read_scales(coded, l).first, l).t().reshape(shape);
}

PlainKvLayout encode_kv(const KvCodec& codec, std::vector<at::Tensor>& keys, std::vector<at::Tensor>& values) {
  PlainKvLayout plain;
  bool first = true;
  for (size_t l = 0; l < keys.size(); ++l)
    for (auto* t : {&keys[l], &values[l]}) {
      plain.shapes.push_back(t->defined() ? t->sizes().vec() : std::vector<int64_t>{});
      if (!t->defined()) continue;
      if (!first && t->scalar_type() != plain.dtype)
        throw std::invalid_argument("memory bank: a block's keys and values differ in dtype");
      plain.dtype = t->scalar_type(), first = false;
      *t = codec.encode(*t);
    }
  return plain;
}

void decode_kv(const KvCodec& codec, const PlainKvLayout& plain, std::vector<at::Tensor>& keys,
               std::vector<at::Tensor>& values) {
  size_t i = 0;
  for (size_t l = 0; l < keys.size(); ++l)
    for (auto* t : {&keys[l], &values[l]}) {
      const auto& shape = plain.shapes[i++];
      if (t->defined() && !shape.empty()) *t = codec.decode(*t, shape, plain.dtype);
    }
}

}  // namespace svqa
