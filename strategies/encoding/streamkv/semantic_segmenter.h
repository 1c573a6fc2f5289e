#pragma once
// StreamKV's online segmentation of the frame stream (reference code sou1p0wer/StreamKV,
// `Abstract_StreamKV.encode_video` and `merge`). A frame's descriptor is the mean of its visual
// tokens; s_t = cos(descriptor_t, descriptor_{t-1}) against the previous *raw* frame (never a
// merged entry), with ‖a‖‖b‖ + 1e-8 in the denominator. With the open segment of c entries:
//   c < min_size or s_t > theta → the frame joins the segment; if the segment was already full
//     (c ≥ max_size) the adjacent pair of entries with the highest stored similarity is merged
//     (element-wise mean of the visual tokens, the second deleted, its neighbours' similarities recomputed), so it stays
//     at max_size entries;
//   otherwise → boundary: the segment closes and the frame opens the next one.
// `uniform` mode (the paper's ablation) closes a segment every max_size frames instead.
// Descriptors and similarities are computed in float64 (the reference code: fp16 on the GPU).

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace svqa {

struct SegmenterOptions {
  std::string mode = "semantic";  // semantic | uniform
  int64_t min_size = 4;           // m: frames before a cut is allowed
  int64_t max_size = 64;          // M: entries a segment holds (uniform: frames per segment)
  double theta = 0.99;            // a cut needs s_t ≤ theta
};

// One entry of a segment: a unit's features, or the mean of merged ones.
struct SegmentEntry {
  at::Tensor features;          // [n, hidden]
  std::vector<int64_t> units;   // the pushed units it holds, in push order (0, 1, ... over the stream)
  at::Tensor deepstack;         // Qwen3-VL: [K, n, hidden] beside features, merged as they are; else undefined
  int64_t text_before = 0, text_after = 0;  // Qwen3-VL: timestamp text rows around the visual tokens
};

// The mean of entries: their visual rows averaged, the text rows (Qwen3-VL's timestamp, whose
// length varies with the time) those of entries[keep_text]; with no text, the plain mean.
SegmentEntry mean_entry(const std::vector<SegmentEntry>& entries, size_t keep_text);

struct Segment {
  std::vector<SegmentEntry> entries;
  // Each merge while the segment was open: the index of the pair's first entry, in order.
  std::vector<int64_t> merges;
};

class OnlineSegmenter {
 public:
  explicit OnlineSegmenter(SegmenterOptions options);

  // The next unit's visual tokens [n, hidden]; returns the segment this closed, if any.
  // `deepstack`: Qwen3-VL's DeepStack features of those tokens (undefined: none).
  std::optional<Segment> push(const at::Tensor& features, const at::Tensor& deepstack = {}, int64_t text_before = 0,
                              int64_t text_after = 0);
  // Closes the open segment (end of the frames, or a question is coming); nullopt when none is open.
  std::optional<Segment> flush();

  bool open() const { return !segment_.entries.empty(); }
  int64_t pushed() const { return pushed_; }

 private:
  void merge_most_similar();

  SegmenterOptions options_;
  Segment segment_;
  std::vector<double> similarities_;  // between adjacent entries of the open segment
  int64_t size_ = 0;                  // the reference code's counter c (stays at max_size once full)
  at::Tensor previous_;               // descriptor of the previous raw frame
  int64_t pushed_ = 0;
};

// The reference code's frame similarity: cosine of the token means, ‖a‖‖b‖ + 1e-8 below.
double descriptor_similarity(const at::Tensor& a, const at::Tensor& b);

}  // namespace svqa
