#include "engine/visual_units.h"

#include <algorithm>
#include <stdexcept>

#include "core/nn/rope.h"
#include "models/video/frame_preprocessor.h"
#include "models/backbones/video_positions.h"
#include "models/backbones/video_prompt.h"

namespace svqa {

int64_t VisualUnitMaker::frames_per_unit_of(const Backbone& backbone) {
  const auto& m = backbone.manifest();
  return uses_temporal_patches(m) ? m.vision.temporal_patch_size : 1;
}

VisualUnitMaker::VisualUnitMaker(Backbone& backbone, const Frames& frames, int64_t clip_frames)
    : backbone_(backbone), frames_(frames), frames_per_unit_(frames_per_unit_of(backbone)), clip_frames_(clip_frames) {}

namespace {

// A Qwen3-VL unit: its visual tokens inside its frame prompt, positioned from `next` (text, then
// the patch as get_rope_index places it, then text); DeepStack features zero at the text rows.
void wrap_in_frame_prompt(Backbone& backbone, VisualUnit& unit, const at::Tensor& deepstack, const VisualInput& one,
                          double fps, int64_t next) {
  const Manifest& m = backbone.manifest();
  const auto ids = frame_prompt_ids(m, backbone.tokenizer(), (unit.start_time + unit.end_time) / 2);
  const auto nb = static_cast<int64_t>(ids.before.size()), na = static_cast<int64_t>(ids.after.size());
  const int64_t n = unit.tokens.size(0);
  const auto visual = video_positions(m, one, n, next + nb, fps);
  const int64_t after = next_position(visual);
  unit.tokens = at::cat({backbone.embed(at::tensor(ids.before, at::kLong)), unit.tokens.to(backbone.device()),
                         backbone.embed(at::tensor(ids.after, at::kLong))});
  unit.positions = at::cat({text_positions(next, nb), visual, text_positions(after, na)}, 1);
  unit.text_before = nb;
  unit.text_after = na;
  if (!deepstack.defined()) return;
  const auto zeros = [&](int64_t rows) { return at::zeros({deepstack.size(0), rows, deepstack.size(2)}, deepstack.options()); };
  unit.deepstack = at::cat({zeros(nb), deepstack, zeros(na)}, 1);
}

}  // namespace

std::vector<VisualUnit> VisualUnitMaker::make(int64_t first, int64_t count, int64_t video_start, int64_t next_free,
                                              bool with_tokens) {
  if (count <= 0 || count % frames_per_unit_)
    throw std::invalid_argument("visual units: " + std::to_string(count) + " frames is not a multiple of " +
                                std::to_string(frames_per_unit_));
  if (first < frames_.first || first + count > frames_.first + frames_.rgb.size(0))
    throw std::out_of_range("visual units: frames [" + std::to_string(first) + ", " + std::to_string(first + count) +
                            ") are not in the frames held, [" + std::to_string(frames_.first) + ", " +
                            std::to_string(frames_.first + frames_.rgb.size(0)) + ")");
  // Frames go through preprocessing and the tower as many at a time as the tower takes per call, so
  // the call's memory is one tower call's plus the outputs, however many frames it is given. Each
  // chunk is sized as the whole call (Qwen3-VL's pixel limits count a clip's frames).
  const int64_t per_call = backbone_.frames_per_vision_call();
  const int64_t chunk = per_call > 0 ? std::max(frames_per_unit_, per_call - per_call % frames_per_unit_) : count;
  const int64_t sizing = clip_frames_ > 0 ? std::max(clip_frames_, count) : count;
  std::vector<VisualUnit> out;
  int64_t next = next_free;
  for (int64_t f = 0; f < count; f += chunk)
    make_chunk(first + f, std::min(chunk, count - f), sizing, video_start, next, with_tokens, out);
  return out;
}

void VisualUnitMaker::make_chunk(int64_t first, int64_t count, int64_t sizing, int64_t video_start, int64_t& next,
                                 bool with_tokens, std::vector<VisualUnit>& out) {
  const auto& m = backbone_.manifest();
  const auto rgb = frames_.rgb.narrow(0, first - frames_.first, count);
  // Frames the reader prepared as it decoded them (app/run's frame_preparer), for a clip of this size.
  const bool prepared = frames_.prepared.defined() && frames_.prepared_clip_frames == sizing;
  const VisualInput input = prepared ? clip_input(frames_.prepared.narrow(0, first - frames_.first, count), m.image)
                                     : preprocess_frames(rgb, m.image, sizing);
  const VisualFeatures features = with_tokens ? backbone_.encode_visual(input) : VisualFeatures{};
  const at::Tensor& tokens = features.tokens;
  const int64_t units = count / frames_per_unit_;
  const int64_t merge = m.vision.spatial_merge_size;  // tokens per unit as the vision tower would give them
  const int64_t per_unit = tokens.defined() ? tokens.size(0) / units
                           : m.architecture == Architecture::LlavaOnevision
                               ? m.vision.tokens_per_frame
                               : input.grid_thw[1] * input.grid_thw[2] / (merge * merge);
  for (int64_t u = 0; u < units; ++u) {
    VisualUnit unit;
    if (tokens.defined()) unit.tokens = tokens.narrow(0, u * per_unit, per_unit);
    unit.rgb = rgb.narrow(0, u * frames_per_unit_, frames_per_unit_);
    unit.first_frame = first + u * frames_per_unit_;
    unit.last_frame = unit.first_frame + frames_per_unit_ - 1;
    unit.start_time = frames_.timestamps[static_cast<size_t>(unit.first_frame - frames_.first)];
    unit.end_time = frames_.timestamps[static_cast<size_t>(unit.last_frame - frames_.first)];
    if (m.architecture == Architecture::LlavaOnevision) {
      unit.positions = text_positions(next, per_unit);
      next += per_unit;
    } else {
      // Positions need the unit's grid only; its pixels are not kept, so each chunk's go when it is done.
      const VisualInput one{at::Tensor(), {1, input.grid_thw[1], input.grid_thw[2]}};
      if (m.architecture == Architecture::Qwen3_VL) {
        const auto ds = features.deepstack.defined() ? features.deepstack.narrow(1, u * per_unit, per_unit) : at::Tensor();
        wrap_in_frame_prompt(backbone_, unit, ds, one, frames_.fps, next);
        next = next_position(unit.positions);
      } else {
        // The stream is one video starting after the sinks; this unit is its temporal patch k.
        unit.positions = video_positions(m, one, per_unit, video_start, frames_.fps, unit.first_frame / frames_per_unit_);
      }
    }
    out.push_back(std::move(unit));
  }
}

}  // namespace svqa
