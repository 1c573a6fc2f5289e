#pragma once
// A layer's keys and values [n, kv_heads, head_dim] in one buffer with room at the end, so a
// growing context (a prompt's tokens, decoded tokens, the frames entering a sliding window) is
// written in place instead of re-concatenating the past: dropping tokens from the front moves a
// start offset, and the buffer is only moved when an append does not fit: compacted into a new
// buffer of the same size when the live part and the append fit in it, else one twice as big.

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

namespace svqa {

// Move-only: two caches sharing a buffer would write over each other's appends.
class KvCache {
 public:
  KvCache() = default;
  KvCache(KvCache&&) = default;
  KvCache& operator=(KvCache&&) = default;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;
  // Empty, with room for `capacity` tokens.
  KvCache(int64_t capacity, int64_t kv_heads, int64_t head_dim, at::TensorOptions options);
  // Holds k and v [n, kv_heads, d] as they are; the first append moves them to a bigger buffer.
  static KvCache wrap(at::Tensor k, at::Tensor v);
  // Keys only (values() undefined, appended values ignored): a second lane kept in step with a
  // KvCache, e.g. a sliding window's rotated keys or its tokens' positions.
  static KvCache keys_only(int64_t capacity, int64_t heads, int64_t dim, at::TensorOptions options);

  bool defined() const { return k_.defined(); }
  int64_t size() const { return end_ - begin_; }
  int64_t capacity() const { return k_.defined() ? k_.size(0) : 0; }
  at::Tensor keys() const { return k_.narrow(0, begin_, size()); }    // [size, kv_heads, d], a view
  at::Tensor values() const { return v_.defined() ? v_.narrow(0, begin_, size()) : at::Tensor(); }

  // Appends k, v [n, kv_heads, d] (copied, cast to the cache's dtype and device; v unread when keys only).
  void append(const at::Tensor& k, const at::Tensor& v);
  // Appends n tokens for the caller to write: views [n, kv_heads, d] of the new slots.
  std::pair<at::Tensor, at::Tensor> extend(int64_t n);
  void drop_front(int64_t n);
  void truncate(int64_t n);  // keeps the first n tokens
  // Room for `extra` more tokens without moving.
  void reserve(int64_t extra);

 private:
  at::Tensor k_, v_;  // [capacity, kv_heads, d]
  int64_t begin_ = 0, end_ = 0;
};

}  // namespace svqa
