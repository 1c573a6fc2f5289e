#include "core/nn/kv_cache.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace svqa {

KvCache::KvCache(int64_t capacity, int64_t kv_heads, int64_t head_dim, at::TensorOptions options)
    : k_(at::empty({capacity, kv_heads, head_dim}, options)), v_(at::empty({capacity, kv_heads, head_dim}, options)) {}

KvCache KvCache::wrap(at::Tensor k, at::Tensor v) {
  if (k.dim() != 3 || v.sizes() != k.sizes())
    throw std::invalid_argument("kv cache: expected keys = values [n, kv_heads, d]");
  KvCache c;
  c.end_ = k.size(0);
  c.k_ = std::move(k);
  c.v_ = std::move(v);
  return c;
}

KvCache KvCache::keys_only(int64_t capacity, int64_t heads, int64_t dim, at::TensorOptions options) {
  KvCache c;
  c.k_ = at::empty({capacity, heads, dim}, options);
  return c;
}

void KvCache::reserve(int64_t extra) {
  if (!defined()) throw std::logic_error("kv cache: reserve on an empty cache (construct it with a shape)");
  if (end_ + extra <= capacity()) return;
  const int64_t n = size();
  const int64_t cap = n + extra <= capacity() ? capacity() : std::max(n + extra, 2 * capacity());
  auto k = at::empty({cap, k_.size(1), k_.size(2)}, k_.options());
  k.narrow(0, 0, n).copy_(keys());
  k_ = std::move(k);
  if (v_.defined()) {
    auto v = at::empty({cap, v_.size(1), v_.size(2)}, v_.options());
    v.narrow(0, 0, n).copy_(values());
    v_ = std::move(v);
  }
  begin_ = 0;
  end_ = n;
}

std::pair<at::Tensor, at::Tensor> KvCache::extend(int64_t n) {
  reserve(n);
  const int64_t at = end_;
  end_ += n;
  return {k_.narrow(0, at, n), v_.defined() ? v_.narrow(0, at, n) : at::Tensor()};
}

void KvCache::append(const at::Tensor& k, const at::Tensor& v) {
  const bool with_values = !defined() || v_.defined();
  if (k.dim() != 3 || (with_values && v.sizes() != k.sizes()) ||
      (defined() && (k.size(1) != k_.size(1) || k.size(2) != k_.size(2))))
    throw std::invalid_argument("kv cache: appended keys and values must be [n, kv_heads, d] like the cache");
  if (!defined()) *this = KvCache(k.size(0), k.size(1), k.size(2), k.options());
  auto [ks, vs] = extend(k.size(0));
  ks.copy_(k);
  if (with_values) vs.copy_(v);
}

void KvCache::drop_front(int64_t n) {
  if (n < 0 || n > size()) throw std::out_of_range("kv cache: cannot drop " + std::to_string(n) + " of " + std::to_string(size()));
  begin_ += n;
}

void KvCache::truncate(int64_t n) {
  if (n < 0 || n > size()) throw std::out_of_range("kv cache: cannot keep " + std::to_string(n) + " of " + std::to_string(size()));
  end_ = begin_ + n;
}

}  // namespace svqa
