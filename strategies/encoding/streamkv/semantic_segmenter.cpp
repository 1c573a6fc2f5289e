#include "strategies/encoding/streamkv/semantic_segmenter.h"

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

namespace {

// Rows [text_before, size - text_after) of x along `dim`, averaged over xs; the text of xs[keep] around.
at::Tensor mean_visual_rows(const std::vector<at::Tensor>& xs, const std::vector<SegmentEntry>& entries, size_t keep,
                            int64_t dim) {
  std::vector<at::Tensor> visual;
  for (size_t i = 0; i < xs.size(); ++i) {
    const auto& e = entries[i];
    visual.push_back(xs[i].narrow(dim, e.text_before, xs[i].size(dim) - e.text_before - e.text_after));
  }
  const auto mean = visual.size() == 2 ? (visual[0] + visual[1]) / 2.0 : at::stack(visual).mean(0);
  const auto& k = entries[keep];
  if (k.text_before == 0 && k.text_after == 0) return mean;
  const auto& x = xs[keep];
  return at::cat({x.narrow(dim, 0, k.text_before), mean, x.narrow(dim, x.size(dim) - k.text_after, k.text_after)}, dim);
}

}  // namespace

SegmentEntry mean_entry(const std::vector<SegmentEntry>& entries, size_t keep_text) {
  std::vector<at::Tensor> features, deepstack;
  for (const auto& e : entries) {
    features.push_back(e.features);
    if (e.deepstack.defined()) deepstack.push_back(e.deepstack);
  }
  SegmentEntry out = entries[keep_text];
  out.features = mean_visual_rows(features, entries, keep_text, 0);
  if (deepstack.size() == entries.size()) out.deepstack = mean_visual_rows(deepstack, entries, keep_text, 1);
  return out;
}

OnlineSegmenter::OnlineSegmenter(SegmenterOptions options) : options_(std::move(options)) {
  if (options_.mode != "semantic" && options_.mode != "uniform")
    throw std::invalid_argument("segmenter: mode must be semantic or uniform, not '" + options_.mode + "'");
  if (options_.min_size < 1 || options_.max_size < options_.min_size)
    throw std::invalid_argument("segmenter: need 1 <= min_size <= max_size");
}

std::optional<Segment> OnlineSegmenter::push(const at::Tensor& features, const at::Tensor& deepstack, int64_t text_before,
                                             int64_t text_after) {
  const int64_t unit = pushed_++;
  if (options_.mode == "uniform") {
    segment_.entries.push_back({features, {unit}, deepstack, text_before, text_after});
    if (static_cast<int64_t>(segment_.entries.size()) < options_.max_size) return std::nullopt;
    return flush();
  }
  const auto current = descriptor(features);
  std::optional<Segment> closed;
  if (segment_.entries.empty()) {
    segment_.entries.push_back({features, {unit}, deepstack, text_before, text_after});
    size_ = 1;
  } else {
    const double s = cosine(current, previous_);
    similarities_.push_back(s);
    if (size_ < options_.min_size || s > options_.theta) {
      segment_.entries.push_back({features, {unit}, deepstack, text_before, text_after});
      if (size_ >= options_.max_size)
        merge_most_similar();
      else
        ++size_;
    } else {
      closed = flush();
      segment_.entries.push_back({features, {unit}, deepstack, text_before, text_after});
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
  auto units = e[i].units;
  units.insert(units.end(), e[i + 1].units.begin(), e[i + 1].units.end());
  e[i] = mean_entry({e[i], e[i + 1]}, 0);
  e[i].units = std::move(units);
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
