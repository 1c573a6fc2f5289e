#include "strategies/encoding/semantic_segmenter.h"

#include <algorithm>
#include <stdexcept>

namespace svqa {
namespace {

// The token mean in float64, taken where the features are (only the mean comes back to the CPU).
at::Tensor descriptor(const at::Tensor& features) { return at::mean(features, {0}, false, at::kDouble).to(at::kCPU); }

double cosine(const at::Tensor& a, const at::Tensor& b) {
  return at::dot(a, b).item<double>() / (a.norm().item<double>() * b.norm().item<double>() + 1e-8);
}

}  // namespace

double descriptor_similarity(const at::Tensor& a, const at::Tensor& b) { return cosine(descriptor(a), descriptor(b)); }

OnlineSegmenter::OnlineSegmenter(SegmenterOptions options) : options_(std::move(options)) {
  if (options_.mode != "semantic" && options_.mode != "uniform")
    throw std::invalid_argument("segmenter: mode must be semantic or uniform, not '" + options_.mode + "'");
  if (options_.min_size < 1 || options_.max_size < options_.min_size)
    throw std::invalid_argument("segmenter: need 1 <= min_size <= max_size");
}

std::optional<Segment> OnlineSegmenter::push(const at::Tensor& features, const at::Tensor& deepstack) {
  const int64_t unit = pushed_++;
  if (options_.mode == "uniform") {
    segment_.entries.push_back({features, {unit}, deepstack});
    if (static_cast<int64_t>(segment_.entries.size()) < options_.max_size) return std::nullopt;
    return flush();
  }
  const auto current = descriptor(features);
  std::optional<Segment> closed;
  if (segment_.entries.empty()) {
    segment_.entries.push_back({features, {unit}, deepstack});
    size_ = 1;
  } else {
    const double s = cosine(current, previous_);
    similarities_.push_back(s);
    if (size_ < options_.min_size || s > options_.theta) {
      segment_.entries.push_back({features, {unit}, deepstack});
      if (size_ >= options_.max_size)
        merge_most_similar();
      else
        ++size_;
    } else {
      closed = flush();
      segment_.entries.push_back({features, {unit}, deepstack});
      size_ = 1;
    }
  }
  previous_ = current;
  return closed;
}

std::optional<Segment> OnlineSegmenter::flush() {
  if (segment_.entries.empty()) return std::nullopt;
  Segment out = std::move(segment_);
  segment_ = Segment{};
  similarities_.clear();
  size_ = 0;
  return out;
}

void OnlineSegmenter::merge_most_similar() {
  auto& e = segment_.entries;
  auto& s = similarities_;
  if (s.empty()) return;
  // The first maximum, as torch.argmax.
  const auto i = static_cast<size_t>(std::max_element(s.begin(), s.end()) - s.begin());
  e[i].features = (e[i].features + e[i + 1].features) / 2.0;
  if (e[i].deepstack.defined()) e[i].deepstack = (e[i].deepstack + e[i + 1].deepstack) / 2.0;
  e[i].units.insert(e[i].units.end(), e[i + 1].units.begin(), e[i + 1].units.end());
  e.erase(e.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  const auto merged = descriptor(e[i].features);
  if (i > 0) s[i - 1] = cosine(descriptor(e[i - 1].features), merged);
  if (i + 1 < s.size()) {
    s[i] = cosine(merged, descriptor(e[i + 1].features));
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  } else {
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
  }
  segment_.merges.push_back(static_cast<int64_t>(i));
}

}  // namespace svqa
